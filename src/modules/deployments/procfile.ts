/** Parses a Procfile: `<type>: <command>` lines; blank lines and # comments ignored. */
export function parseProcfile(text: string): Record<string, string> {
  const types: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^([A-Za-z0-9_-]+)\s*:\s*(.+)$/.exec(line);
    if (m) types[m[1]] = m[2].trim();
  }
  return types;
}
