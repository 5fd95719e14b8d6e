import { RateKitError, RateKitOptionError } from '@ratekit/core';

/**
 * How nodes exchange their sync messages. {@link redisTransport} implements
 * it on Redis pub/sub; any broadcast bus with the same guarantees (every
 * subscriber gets each message at most once, a sender's messages in order)
 * can stand in, e.g. for tests.
 */
export interface SyncTransport {
  /**
   * Sends one message to every node subscribed, this one included.
   * Resolves once the bus accepted it; rejects when it did not, and the
   * store then keeps the deltas for its next sync.
   */
  publish(message: string): Promise<void>;
  /** Starts delivering every message on the bus to `onMessage`. Resolves once subscribed. */
  subscribe(onMessage: (message: string) => void): Promise<void>;
  /**
   * False while the connection used to publish is down: the store then
   * holds its deltas instead of queueing messages on a dead connection.
   */
  readonly connected: boolean;
  /** Stops the delivery and releases what the transport owns (never the caller's clients). */
  close(): Promise<void>;
}

/**
 * The part of a node-redis client (`redis` 5+, from `createClient()`) the
 * transport uses. Only `isReady`, `publish` and `subscribe`/`unsubscribe`
 * are called on the caller's clients; `duplicate()` and `connect()` /
 * `close()` only on the subscriber the transport makes itself.
 */
export interface NodeRedisPubSubLike {
  readonly isReady: boolean;
  publish(channel: string, message: string): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => unknown): Promise<unknown>;
  unsubscribe(channel: string, listener: (message: string, channel: string) => unknown): Promise<unknown>;
  duplicate?(): unknown;
}

/**
 * The part of an ioredis client (`new Redis()`) the transport uses. Only
 * `status`, `publish`, `subscribe`/`unsubscribe` and the `message` event are
 * used on the caller's clients; `duplicate()` and `quit()` only on the
 * subscriber the transport makes itself.
 */
export interface IoRedisPubSubLike {
  readonly status: string;
  publish(channel: string, message: string): Promise<unknown>;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  off(event: 'message', listener: (channel: string, message: string) => void): unknown;
  duplicate?(): unknown;
}

/** A node-redis or ioredis client, connected and owned by the caller. */
export type RedisPubSubLike = NodeRedisPubSubLike | IoRedisPubSubLike;

/** Options of {@link redisTransport}. */
export interface RedisTransportOptions {
  /**
   * The connection that publishes: a node-redis (`redis` 5+) or ioredis
   * client, connected and owned by the caller (the transport never connects,
   * quits or reconfigures it). It can be the client the app already uses.
   */
  client: RedisPubSubLike;
  /**
   * A dedicated connection for `SUBSCRIBE` (a connection in subscriber mode
   * cannot run other commands), connected and owned by the caller; of the
   * same library as `client`. When omitted, the transport makes one with
   * `client.duplicate()`, connects it, and closes it in `close()`.
   */
  subscriber?: RedisPubSubLike;
  /** The pub/sub channel. Every node of one deployment must use the same one. @default 'ratekit:sync' */
  channel?: string;
  /** Receives failures of the subscriber the transport owns (reported once per outage, not per reconnect attempt). */
  onError?: (error: RateKitError) => void;
}

/**
 * A {@link SyncTransport} on Redis pub/sub (`PUBLISH` / `SUBSCRIBE`), with
 * node-redis or ioredis.
 *
 * - **Delivery** is Redis pub/sub's: at most once, in order per publisher,
 *   only to subscribers connected at the time. A node whose subscriber is
 *   disconnected misses what peers publish meanwhile (see the README).
 * - **Reconnects** are the client library's: both resubscribe on their own
 *   after a reconnect. `connected` follows the publishing client's
 *   `isReady` (node-redis) or `status === 'ready'` (ioredis).
 * - **Redis Cluster**: plain `PUBLISH` reaches every node of a cluster, so a
 *   connection to any one master works as either client; not tested here.
 *
 * @throws {RateKitOptionError} when `client` or `subscriber` is not a node-redis or ioredis client,
 *   when they are the same connection or of different libraries, when `subscriber` is omitted and
 *   `client` has no `duplicate()`, or when `channel` is not a non-empty string.
 * @example
 * ```ts
 * import { createClient } from 'redis';
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).connect();
 * const transport = redisTransport({ client, channel: 'myapp:ratekit' });
 * const store = syncedStore({ transport });
 * ```
 */
export function redisTransport(options: RedisTransportOptions): SyncTransport {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- public input: JavaScript callers can pass any value, and get a coded error for it
  if (typeof options !== 'object' || options === null) throw new RateKitOptionError('options', 'an object', options);
  const channel = options.channel ?? 'ratekit:sync';
  if (typeof channel !== 'string' || channel === '') throw new RateKitOptionError('channel', 'a non-empty string', channel);
  const onError = options.onError ?? (() => {});
  const publisherKind = kindOf(options.client);
  if (publisherKind === undefined) throw new RateKitOptionError('client', 'a node-redis (redis 5+) or ioredis client', options.client);
  if (options.subscriber !== undefined) {
    const subscriberKind = kindOf(options.subscriber);
    if (subscriberKind === undefined) throw new RateKitOptionError('subscriber', 'a node-redis (redis 5+) or ioredis client', options.subscriber);
    if (options.subscriber === options.client) {
      throw new RateKitOptionError('subscriber', 'a dedicated connection, not the publishing `client` (a subscribed connection cannot publish)', 'the same client');
    }
    if (subscriberKind !== publisherKind) {
      throw new RateKitOptionError('subscriber', `a ${publisherKind} client like \`client\`, not ${subscriberKind === 'ioredis' ? 'an' : 'a'} ${subscriberKind} one`, options.subscriber);
    }
  } else if (typeof options.client.duplicate !== 'function') {
    throw new RateKitOptionError('subscriber', 'a dedicated connection, since `client` has no duplicate()', undefined);
  }
  return publisherKind === 'node-redis'
    ? nodeRedisTransport(options.client as NodeRedisPubSubLike, options.subscriber as NodeRedisPubSubLike | undefined, channel, onError)
    : ioRedisTransport(options.client as IoRedisPubSubLike, options.subscriber as IoRedisPubSubLike | undefined, channel, onError);
}

function kindOf(client: unknown): 'node-redis' | 'ioredis' | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const c = client as Record<string, unknown>;
  if (typeof c.publish !== 'function' || typeof c.subscribe !== 'function' || typeof c.unsubscribe !== 'function') return undefined;
  if (typeof c.status === 'string' && typeof c.on === 'function' && typeof c.off === 'function') return 'ioredis';
  if (typeof c.isReady === 'boolean') return 'node-redis';
  return undefined;
}

/** Reports the first error of an outage, and again only after the connection was ready in between. */
function oncePerOutage(onError: (error: RateKitError) => void): { error(error: unknown): void; ready(): void } {
  let reported = false;
  return {
    error(error) {
      if (reported) return;
      reported = true;
      onError(new RateKitError('ERR_RATEKIT_STORE', `The synced store's Redis subscriber failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
    },
    ready() {
      reported = false;
    },
  };
}

type NodeRedisOwned = NodeRedisPubSubLike &
  ConnectionEvents & {
    readonly isOpen: boolean;
    connect(): Promise<unknown>;
    close?(): Promise<unknown>;
    quit?(): Promise<unknown>;
    destroy?(): void;
  };

function nodeRedisTransport(client: NodeRedisPubSubLike, given: NodeRedisPubSubLike | undefined, channel: string, onError: (error: RateKitError) => void): SyncTransport {
  let owned: NodeRedisOwned | undefined;
  let subscriber = given;
  let listener: ((message: string) => void) | undefined;
  return {
    get connected() {
      return client.isReady;
    },
    publish: (message) => client.publish(channel, message).then(() => undefined),
    async subscribe(onMessage) {
      if (subscriber === undefined) {
        owned = client.duplicate!() as NodeRedisOwned;
        const outage = oncePerOutage(onError);
        // node-redis throws an 'error' event with no listener: always listen on the connection we own.
        owned.on('error', (error) => outage.error(error));
        owned.on('ready', () => outage.ready());
        await owned.connect();
        subscriber = owned;
      }
      listener = (message: string) => onMessage(message);
      await subscriber.subscribe(channel, listener);
    },
    async close() {
      if (subscriber !== undefined && listener !== undefined && subscriber.isReady) await subscriber.unsubscribe(channel, listener).catch(() => {});
      if (owned !== undefined && owned.isOpen) {
        // Graceful when connected; otherwise stop its reconnect loop at once.
        if (owned.isReady) await Promise.resolve(typeof owned.close === 'function' ? owned.close() : owned.quit?.()).catch(() => {});
        else owned.destroy?.();
      }
    },
  };
}

type IoRedisOwned = IoRedisPubSubLike & {
  quit(): Promise<unknown>;
  disconnect(): void;
};

/** The connection events the transport listens to on a connection it owns. */
interface ConnectionEvents {
  on(event: 'error' | 'ready', listener: (error?: unknown) => void): unknown;
}

function ioRedisTransport(client: IoRedisPubSubLike, given: IoRedisPubSubLike | undefined, channel: string, onError: (error: RateKitError) => void): SyncTransport {
  let owned: IoRedisOwned | undefined;
  let subscriber = given;
  let listener: ((from: string, message: string) => void) | undefined;
  return {
    get connected() {
      return client.status === 'ready';
    },
    publish: (message) => client.publish(channel, message).then(() => undefined),
    async subscribe(onMessage) {
      if (subscriber === undefined) {
        const copy = client.duplicate!() as IoRedisOwned;
        const outage = oncePerOutage(onError);
        (copy as unknown as ConnectionEvents).on('error', (error) => outage.error(error));
        (copy as unknown as ConnectionEvents).on('ready', () => outage.ready());
        owned = copy;
        subscriber = copy;
      }
      listener = (from: string, message: string) => {
        if (from === channel) onMessage(message);
      };
      const target: IoRedisPubSubLike = subscriber;
      target.on('message', listener);
      await target.subscribe(channel);
    },
    async close() {
      if (subscriber !== undefined && listener !== undefined) {
        subscriber.off('message', listener);
        if (subscriber.status === 'ready') await subscriber.unsubscribe(channel).catch(() => {});
      }
      if (owned !== undefined) {
        const copy = owned;
        if (copy.status === 'ready') await copy.quit().catch(() => copy.disconnect());
        else copy.disconnect();
      }
    },
  };
}
