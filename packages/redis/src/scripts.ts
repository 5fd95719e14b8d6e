import { createHash } from 'node:crypto';
import { DECISION_BATCH_SCRIPT, DECISION_CODE, DECISION_SCRIPT } from './lua.js';

// The Lua itself is in lua.ts, which any runtime can load; what follows needs node:crypto's SHA-1, at load time.
export { DECISION_BATCH_SCRIPT, DECISION_CODE, DECISION_SCRIPT, TTL_SLACK_MS } from './lua.js';

/** SHA-1 of {@link DECISION_SCRIPT}, for EVALSHA. */
export const DECISION_SCRIPT_SHA = createHash('sha1').update(DECISION_SCRIPT).digest('hex');

/** SHA-1 of {@link DECISION_BATCH_SCRIPT}, for EVALSHA. */
export const DECISION_BATCH_SCRIPT_SHA = createHash('sha1').update(DECISION_BATCH_SCRIPT).digest('hex');

/**
 * The name of the decision function, for FCALL, and of the library that
 * holds it: `ratekit_` and the first 16 hex digits of the SHA-1 of
 * {@link DECISION_CODE}, so that versions of this package with different code
 * load different libraries side by side on one server (function names are
 * server-wide) and never call each other's.
 */
export const DECISION_FUNCTION = `ratekit_${createHash('sha1').update(DECISION_CODE).digest('hex').slice(0, 16)}`;

/**
 * The batch function of {@link DECISION_LIBRARY}: several decisions in one
 * call, decided in order, each atomically and as {@link DECISION_FUNCTION}
 * decides it alone (the store coalesces the decisions waiting on one client
 * in one turn of the event loop into one call). Called as
 * `FCALL <DECISION_BATCH_FUNCTION> <number of keys> <keys…> <counts> <argument₁> … <argumentₙ>`:
 * `counts` is empty when each decision has one key (key i is decision i's),
 * else the key count of each decision, space-separated, their keys one after
 * the other; an empty argument is the same as the one before it. The reply is an array: decision i's reply as the lone call
 * gives it, or `!` followed by the error that failed decision i alone.
 */
export const DECISION_BATCH_FUNCTION = `${DECISION_FUNCTION}_batch`;

/**
 * The function library, for `FUNCTION LOAD` (Redis 7 and later): {@link DECISION_CODE}
 * and two functions, registered without flags (they write, so they must not
 * be `no-writes`): {@link DECISION_FUNCTION}, which runs it on its keys and
 * its one argument, and {@link DECISION_BATCH_FUNCTION}, several decisions
 * in one call.
 */
export const DECISION_LIBRARY =
  `#!lua name=${DECISION_FUNCTION}\n${DECISION_CODE}\n` +
  `redis.register_function('${DECISION_FUNCTION}', function(keys, args) return decide(keys, args[1]) end)\n` +
  `redis.register_function('${DECISION_BATCH_FUNCTION}', function(keys, args) return decideMany(keys, args) end)\n`;
