import { type Decision, type HeaderList, headerListOf, type HeaderOptions, rateLimitHeaders } from '@ratekit/core';
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
export function writeHeaders(reply: FastifyReply, decision: Decision, key: string, writer: HeaderWriter, hidden: ReadonlySet<string> | undefined): void {
  const list = writer.shared === undefined ? rateLimitHeaders(decision, { ...writer.options, partitionKey: key }) : writer.shared(decision);
  for (let i = 0; i < list.length; i++) {
    const [name, value] = list[i]!;
    if (hidden !== undefined && hidden.has(name.toLowerCase())) continue;
    reply.header(name, value);
  }
}

/** The resolved header options and, when no field carries the key, core's `headerListOf` for them. */
export interface HeaderWriter {
  readonly options: Readonly<HeaderOptions>;
  /** Without a partition key: the list built once per second of a flood (core's `headerListOf`), not once per response. */
  readonly shared: ((decision: Decision) => Readonly<HeaderList>) | undefined;
}

/** A {@link HeaderWriter} for `options`: made once per limiter. */
export function headerWriter(options: Readonly<HeaderOptions>): HeaderWriter {
  return { options, shared: usesPartitionKey(options) ? undefined : headerListOf(options) };
}

/** draft-8 and later send the hashed key as `pk`; the other formats never read it. */
function usesPartitionKey(options: Readonly<HeaderOptions>): boolean {
  const standard = options.standardHeaders;
  return standard !== false && standard !== 'draft-6' && standard !== 'draft-7';
}
