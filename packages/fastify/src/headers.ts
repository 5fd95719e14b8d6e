import { type Decision, type HeaderOptions, rateLimitHeaders } from '@ratekit/core';
import type { FastifyReply } from 'fastify';

/**
 * Writes core's `rateLimitHeaders()` for a decision to the reply, leaving
 * out the `hidden` names (lower case, from `addHeaders` /
 * `addHeadersOnExceeding`). The values are core's bytes: the adapter never
 * formats a header itself. draft-8+ lists arrive joined (`combineLists`),
 * because `reply.header()` overwrites; with several limiters on one route
 * the last one to run sets the fields.
 *
 * @param options - the resolved header options; draft-8+ also gets the key as `partitionKey`
 */
export function writeHeaders(reply: FastifyReply, decision: Decision, key: string, options: Readonly<HeaderOptions>, hidden: ReadonlySet<string> | undefined): void {
  const list = rateLimitHeaders(decision, usesPartitionKey(options) ? { ...options, partitionKey: key } : options);
  for (let i = 0; i < list.length; i++) {
    const [name, value] = list[i]!;
    if (hidden !== undefined && hidden.has(name.toLowerCase())) continue;
    reply.header(name, value);
  }
}

/** draft-8 and later send the hashed key as `pk`; the other formats never read it. */
function usesPartitionKey(options: Readonly<HeaderOptions>): boolean {
  const standard = options.standardHeaders;
  return standard !== false && standard !== 'draft-6' && standard !== 'draft-7';
}
