// blockUntilReady on Node, over TCP and HTTP, when Date.now() stands still (as on a Cloudflare Worker between
// I/O, upstash/ratelimit-js #70): it ends at its deadline, having asked Redis once. (Bun, Deno, workerd:
// block-until-ready.edge.test.ts.)
import { askWithWindowMargin, describeWithService, redisService } from '@ratekit/test-utils';
import { Ratelimit } from './ratelimit.js';
import { type Clients, closeClients, openClients, uniquePrefix } from './test-support.js';

describeWithService(redisService, 'blockUntilReady with a clock that stands still', (server) => {
  let clients: Clients;
  beforeAll(async () => {
    clients = await openClients(server().url);
  });
  afterAll(() => closeClients(clients));

  it.each(['ioredis', 'upstash'] as const)(
    'over %s: resolves with the refusal at its deadline',
    async (kind) => {
      const prefix = uniquePrefix('block-frozen');
      // The limiter's own clock is read at construction (Date.now itself): it keeps the real time.
      const ratelimit = new Ratelimit({ redis: clients[kind], limiter: Ratelimit.fixedWindow(1, '60 s'), prefix, ephemeralCache: false });
      const { identifier } = await askWithWindowMargin((id) => ratelimit.limit(id), 2_000); // the 300 ms deadline, and 1.7 s to spare
      const limit = jest.spyOn(ratelimit, 'limit');
      const frozen = jest.spyOn(Date, 'now').mockReturnValue(Date.now());
      try {
        // A deadline kept on Date.now() alone never comes: the test's timeout would fail it.
        const response = await ratelimit.blockUntilReady(identifier, 300);
        expect(response.success).toBe(false);
        expect(limit).toHaveBeenCalledTimes(1); // one refusal, then the timer of the deadline
      } finally {
        frozen.mockRestore();
        await clients.ioredis.del(`${prefix}:${identifier}:${Math.floor(Date.now() / 60_000)}`);
      }
    },
    5_000,
  );
});
