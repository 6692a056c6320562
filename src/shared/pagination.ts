/** The platform's `meta.pagination` block. Pages are numbered from 1. */
export interface PaginationMeta {
  prev_page: number | null;
  current_page: number;
  next_page: number | null;
  total_pages: number;
  total_count: number;
}

export function paginate(
  totalCount: number,
  page: number,
  perPage: number,
): { meta: PaginationMeta; offset: number; limit: number } {
  const totalPages = Math.max(1, Math.ceil(totalCount / perPage));
  return {
    meta: {
      prev_page: page > 1 ? Math.min(page - 1, totalPages) : null,
      current_page: page,
      next_page: page < totalPages ? page + 1 : null,
      total_pages: totalPages,
      total_count: totalCount,
    },
    offset: (page - 1) * perPage,
    limit: perPage,
  };
}
