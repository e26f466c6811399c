// The request limits a job body is held to, wherever it comes (POST .../jobs, a schedule's job): its nodes and its
// command, as the server's settings bound them.
import type { JobStart } from '../../api/push-jobs.js';
import { ApiError } from '../errors.js';
import type { Ctx } from '../respond.js';

/** A job body held to the request limits on its nodes and command; `field`, where it sits in the request body. */
export function withinLimits(c: Ctx, body: JobStart, field = ''): JobStart {
  const limits = c.get('limits');
  if (body.nodes.length > limits.jobNodes)
    throw ApiError.of(400, `Field '${field}nodes' names more than ${limits.jobNodes} nodes`);
  if (body.command.length > limits.commandLength)
    throw ApiError.of(400, `Field '${field}command' is longer than ${limits.commandLength} characters`);
  return body;
}
