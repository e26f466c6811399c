// The HTTP-date of the REST bodies (spec 2.4), as every schema that carries a time checks it.
import { z } from 'zod';
import { parseHttpDate } from '../lib/dates.js';

/** `Sat, 21 Nov 2026 10:35:19 GMT` (spec 2.4). */
export const httpDateSchema = z.string().refine((s) => parseHttpDate(s) !== undefined, 'must be an HTTP-date');
