/**
 * Which slot of a key's entry each limit's state takes in the memory store (see `entry.ts`): the
 * first (namespace, limit id) the store sees is its primary slot, whose state a key keeps bare;
 * every other limit has a slot id, `${namespace}\u0000${limit id}`, in a Slots wrapper. The
 * user-controlled key is never part of a slot id, so it cannot reach another namespace's state.
 *
 * @module
 */
import type { ResolvedLimit } from '../limit.js';
import type { SlotLimits } from './expiry.js';

/**
 * One store's slot table. The store's hot path reads `primaryLimit` and `primaryNamespace` before
 * it calls {@link LimitSlots.isPrimary}: plain fields of one object, as cheap as the closure
 * variables they were (icount).
 */
export class LimitSlots implements SlotLimits {
  /** The primary slot's namespace and limit id; undefined until the store's first decision. */
  primaryNamespace: string | undefined = undefined;
  primaryId: string | undefined = undefined;
  /** The last limit seen in the primary slot (its TTL and budget judge bare states). */
  primaryLimit: ResolvedLimit | undefined = undefined;
  /** The last limit seen for each other slot, so a prune can compute TTLs. */
  readonly bySlot = new Map<string, ResolvedLimit>();
  /** Slot ids by limit, built once per (limit, namespace) rather than per decision. */
  readonly #slotIds = new WeakMap<ResolvedLimit, { namespace: string; id: string }>();
  // The slot ids of the last policy seen: a limiter passes the same limits array on every call,
  // so a policy's decision looks its slot ids up once, not twice per limit in a WeakMap.
  #idsLimits: readonly ResolvedLimit[] | undefined = undefined;
  #idsNamespace = '';
  #ids: Array<string | undefined> = [];

  /** The limit of the primary slot, for {@link SlotLimits}. */
  get primary(): ResolvedLimit | undefined {
    return this.primaryLimit;
  }

  /** True when `limit` in `namespace` takes the primary slot (the first one seen takes it). */
  isPrimary(namespace: string, limit: ResolvedLimit): boolean {
    if (this.primaryId === undefined) {
      this.primaryNamespace = namespace;
      this.primaryId = limit.id;
    }
    if (limit.id === this.primaryId && namespace === this.primaryNamespace) {
      this.primaryLimit = limit;
      return true;
    }
    return false;
  }

  /** A limit's slot under `namespace`: undefined for the primary slot, else its slot id. */
  slotOf(namespace: string, limit: ResolvedLimit): string | undefined {
    if (this.isPrimary(namespace, limit)) return undefined;
    const known = this.#slotIds.get(limit);
    if (known !== undefined && known.namespace === namespace) return known.id;
    const id = `${namespace}\u0000${limit.id}`;
    this.#slotIds.set(limit, { namespace, id });
    this.bySlot.set(id, limit);
    return id;
  }

  /** The slots of a policy's limits, in order (undefined: the primary slot). */
  slotIdsOf(namespace: string, limits: readonly ResolvedLimit[]): ReadonlyArray<string | undefined> {
    if (limits === this.#idsLimits && namespace === this.#idsNamespace && this.#ids.length === limits.length) return this.#ids;
    const found = limits.map((limit) => this.slotOf(namespace, limit));
    this.#idsLimits = limits;
    this.#idsNamespace = namespace;
    this.#ids = found;
    return found;
  }

  /** Every limit seen in `namespace`. */
  knownLimits(namespace: string): ResolvedLimit[] {
    const found: ResolvedLimit[] = [];
    if (this.primaryLimit !== undefined && this.primaryNamespace === namespace) found.push(this.primaryLimit);
    for (const [id, limit] of this.bySlot) if (id.startsWith(`${namespace}\u0000`)) found.push(limit);
    return found;
  }
}
