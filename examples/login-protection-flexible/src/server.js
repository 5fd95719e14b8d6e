// Starts the example: `pnpm --filter @ratekit/example-login-protection-flexible start` (memory), or with
// REDIS_URL=redis://127.0.0.1:6379 to count failures in Redis.
import { createApp, createLimiters } from './app.js';

const redisUrl = process.env.REDIS_URL;
const redisClient = redisUrl ? new (await import('ioredis')).Redis(redisUrl) : undefined;
const port = Number(process.env.PORT ?? 3000);
createApp({ limiters: createLimiters(redisClient) }).listen(port, () => console.log(`listening on http://localhost:${port} (${redisClient ? 'Redis' : 'memory'})`));
