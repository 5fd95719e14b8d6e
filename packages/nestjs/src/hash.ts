import { createHash } from 'node:crypto';

/** Hex SHA-256 of `text`: the guard's storage keys, fixed-length whatever the tracker holds. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
