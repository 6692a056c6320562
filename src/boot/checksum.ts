import { createHash } from 'node:crypto';
import * as zlib from 'node:zlib';

// zlib.crc32 exists from Node 20.15 / 22.2; older Node 20 releases take the first 4 bytes of a SHA-256 instead.
const nativeCrc32 = (zlib as { crc32?: (data: Buffer) => number }).crc32;

/** A 32-bit checksum of `data`: tells a code cache's source and payload apart from other or damaged ones (not a signature). */
export function checksum(data: Buffer): number {
  return nativeCrc32 ? nativeCrc32(data) : createHash('sha256').update(data).digest().readUInt32LE(0);
}

export function crc32Hex(data: Buffer): string {
  return checksum(data).toString(16).padStart(8, '0');
}
