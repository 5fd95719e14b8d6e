// The rate-limit headers agree with each other on every response (issue 38 §3; the rule is @ratekit/test-utils'
// checkAdapterHeaderConsistency).
import { checkAdapterHeaderConsistency } from '@ratekit/test-utils';
import { rateLimit, withHeaders } from './index.js';

it('sends rate-limit headers that agree with each other, for every algorithm and header set', async () => {
  await checkAdapterHeaderConsistency((options) => {
    const limit = rateLimit(options);
    return async () => {
      const result = await limit(new Request('http://localhost/'), { ip: '203.0.113.7' });
      const response = result.allowed ? withHeaders(new Response('ok'), result.headers) : result.response;
      return { status: response.status, get: (name) => response.headers.get(name) };
    };
  });
});
