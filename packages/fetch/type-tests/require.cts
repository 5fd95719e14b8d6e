// A CommonJS app: `require` of the CommonJS build, and its types.
import fetchLimit = require('@ratekit/fetch');

const limit = fetchLimit.rateLimit({ limit: 100, windowMs: 60_000, standardHeaders: 'draft-7', legacyHeaders: true });
export async function handle(request: Request, ip: string): Promise<Response> {
  const result = await limit(request, { ip });
  if (result.response) return result.response;
  return fetchLimit.withHeaders(new Response('ok'), result.headers);
}

// @ts-expect-error `ip` is an address, not a number
limit(new Request('https://example.com/'), { ip: 42 });
