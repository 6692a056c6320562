// An image's labels as one LABEL instruction at the end of its Dockerfile. The classic builder turns
// the build API's `labels` option into one LABEL step per label, each committed through an
// intermediate container (about 150 ms apiece on an idle engine): four labels cost four steps where
// `docker build --label` of one label costs one. One instruction gives the same labels in one step.
import { open } from 'node:fs/promises';
import { join } from 'node:path';

/** A Dockerfile read to append to it; a larger one keeps the API's labels (it is read in memory). */
const MAX_DOCKERFILE_BYTES = 256 * 1024;
/** Keys and values written as they are: nothing the Dockerfile's quoting or `$` expansion would change. */
const PLAIN = /^[A-Za-z0-9._\-/:@+=, ]*$/;

/** `LABEL "k"="v" …` with every label, or null when one of them is not plain text. */
export function labelInstruction(labels: Record<string, string>): string | null {
  const entries = Object.entries(labels);
  if (!entries.length || entries.some(([k, v]) => !k || !PLAIN.test(k) || !PLAIN.test(v))) return null;
  return `LABEL ${entries.map(([k, v]) => `"${k}"="${v}"`).join(' ')}`;
}

/**
 * The Dockerfile to build with its labels appended as one instruction (a new last line, so a
 * multi-stage file labels its final image, as the API's option does), or null to keep the API's
 * `labels`: no labels, a label that is not plain text, or the context's Dockerfile missing or large.
 */
export async function labelledDockerfile(
  contextDir: string,
  dockerfile: string | undefined,
  labels: Record<string, string> | undefined,
): Promise<string | null> {
  const instruction = labels ? labelInstruction(labels) : null;
  if (!instruction) return null;
  const text = dockerfile ?? (await readSmall(join(contextDir, 'Dockerfile')));
  if (text === null || !endsCleanly(text)) return null;
  return `${text}${text.endsWith('\n') ? '' : '\n'}\n${instruction}\n`;
}

/**
 * A Dockerfile whose last line could continue into the one appended is left alone: a line continued
 * with a backslash (a blank line does not end it), or another escape character set by a directive.
 */
function endsCleanly(text: string): boolean {
  if (/^#\s*escape\s*=/im.test(text)) return false;
  return !text.trimEnd().endsWith('\\');
}

/** A regular file's text when it is at most MAX_DOCKERFILE_BYTES, else null (missing, larger, not a file). */
export async function readSmall(path: string): Promise<string | null> {
  const file = await open(path, 'r').catch(() => null);
  if (!file) return null;
  try {
    const st = await file.stat();
    if (!st.isFile() || st.size > MAX_DOCKERFILE_BYTES) return null;
    return await file.readFile('utf8');
  } finally {
    await file.close();
  }
}
