// A hostname: labels of letters, digits and inner hyphens, at least two labels; a leading `*.` makes a
// wildcard domain (the platform accepts them). Checked label by label: no backtracking. Apart from the domain
// schemas: the domains service is built at start, the schemas only when the domains routes are first used.
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function hostnameProblem(name: string): string | null {
  if (name.length === 0) return "can't be blank";
  if (name !== name.toLowerCase()) return 'must be in lower case';
  const labels = name.split('.');
  if (labels[0] === '*') labels.shift();
  if (labels.length < 2) return 'must be a fully qualified domain name, such as www.example.com or shop.localhost';
  if (!labels.every((l) => LABEL.test(l))) return 'is not a valid hostname: use letters, digits, hyphens and dots only';
  return null;
}
