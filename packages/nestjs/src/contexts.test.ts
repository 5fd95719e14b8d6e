// GraphQL, WebSocket and RPC contexts, with @nestjs/throttler's documented override patterns.
//
// GraphQL is simulated: @nestjs/graphql is not installed here. `GqlExecutionContext.create(context)
// .getContext()` is the resolver's third argument (`context.getArgByIndex(2)`), which is what
// `gqlContext()` below returns, on an ExecutionContextHost of type 'graphql' holding the resolver's
// (root, args, context, info), as Nest's GraphQL external context creator builds it.
import type { ExecutionContext } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { Test } from '@nestjs/testing';
import { ThrottlerException } from './exception.js';
import { ThrottlerGuard } from './guard.js';
import type { ThrottlerRequest } from './guard-types.js';
import { ThrottlerModule } from './module.js';
import type { ThrottlerModuleOptions } from './options.js';

/** What `GqlExecutionContext.create(context).getContext()` returns. */
const gqlContext = (context: ExecutionContext) => context.getArgByIndex<{ req: Record<string, any>; res: Record<string, any> }>(2);

/** The GraphQL guard of @nestjs/throttler's documentation. */
@Injectable()
class GqlThrottlerGuard extends ThrottlerGuard {
  protected override getRequestResponse(context: ExecutionContext) {
    const ctx = gqlContext(context);
    return { req: ctx.req, res: ctx.res };
  }
}

/** The WebSocket guard of @nestjs/throttler's documentation: its own handleRequest, on the storage. */
@Injectable()
class WsThrottlerGuard extends ThrottlerGuard {
  protected override async handleRequest(requestProps: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, generateKey } = requestProps;
    const client = context.switchToWs().getClient();
    const tracker = client._socket.remoteAddress;
    const key = generateKey(context, tracker, throttler.name!);
    const record = await this.storageService.increment(key, ttl, limit, blockDuration, throttler.name!);
    if (record.isBlocked) await this.throwThrottlingException(context, { limit, ttl, key, tracker, ...record });
    return true;
  }
}

class ItemsResolver {
  items() {
    return [];
  }
}

async function guardOf<T extends ThrottlerGuard>(guard: new (...args: any[]) => T, options: ThrottlerModuleOptions): Promise<T> {
  const moduleRef = await Test.createTestingModule({ imports: [ThrottlerModule.forRoot(options)], providers: [guard] }).compile();
  await moduleRef.init();
  return moduleRef.get(guard);
}

function graphqlContext(req: Record<string, any>, res: Record<string, any>): ExecutionContext {
  const context = new ExecutionContextHost([{}, { first: 10 }, { req, res }, { fieldName: 'items' }], ItemsResolver, ItemsResolver.prototype.items);
  context.setType('graphql');
  return context;
}

describe.each([
  ["@nestjs/throttler's mode", [{ limit: 2, ttl: 60_000 }]],
  ['the ratekit mode', { policy: 'all-or-nothing', throttlers: [{ limit: 2, ttl: 60_000 }] }],
] as Array<[string, ThrottlerModuleOptions]>)('GraphQL, getRequestResponse overridden (%s)', (_mode, options) => {
  it('throttles a resolver by the request in the GraphQL context and sets headers on its response', async () => {
    const guard = await guardOf(GqlThrottlerGuard, options);
    const req = { ip: '203.0.113.7', headers: {} };
    const res = { header: jest.fn() };
    expect(await guard.canActivate(graphqlContext(req, res))).toBe(true);
    expect(res.header).toHaveBeenCalledWith('X-RateLimit-Limit', 2);
    expect(res.header).toHaveBeenCalledWith('X-RateLimit-Remaining', 1);
    expect(await guard.canActivate(graphqlContext(req, res))).toBe(true);
    expect(res.header).toHaveBeenLastCalledWith('X-RateLimit-Reset', 60);
    await expect(guard.canActivate(graphqlContext(req, res))).rejects.toThrow(ThrottlerException);
    expect(res.header).toHaveBeenLastCalledWith('Retry-After', 60);
    // Another client has its own count.
    expect(await guard.canActivate(graphqlContext({ ip: '203.0.113.8', headers: {} }, { header: jest.fn() }))).toBe(true);
  });
});

describe('WebSockets, handleRequest overridden', () => {
  it("counts by the socket's address on the storage and refuses over the limit", async () => {
    const guard = await guardOf(WsThrottlerGuard, [{ limit: 1, ttl: 60_000 }]);
    const client = { _socket: { remoteAddress: '198.51.100.4' } };
    const wsContext = () => {
      const context = new ExecutionContextHost([client, { event: 'message' }], ItemsResolver, ItemsResolver.prototype.items);
      context.setType('ws');
      return context;
    };
    expect(await guard.canActivate(wsContext())).toBe(true);
    await expect(guard.canActivate(wsContext())).rejects.toThrow(ThrottlerException);
  });
});
