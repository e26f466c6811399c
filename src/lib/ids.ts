// Identifiers: 32 lower-case hex characters, as object guids and job ids are written.
import { randomBytes } from 'node:crypto';

export function newGuid(): string {
  return randomBytes(16).toString('hex');
}
