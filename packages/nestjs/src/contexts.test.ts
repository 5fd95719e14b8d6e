// WebSocket contexts, with @nestjs/throttler's documented override pattern (its own handleRequest on
// the storage); GraphQL on a real Apollo Server is in graphql.test.ts.
import { Injectable, type Type } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { Test } from '@nestjs/testing';
import { ThrottlerException } from './exception.js';
import { ThrottlerGuard } from './guard.js';
import type { ThrottlerRequest } from './guard-types.js';
import { ThrottlerModule } from './module.js';
import type { ThrottlerModuleOptions } from './options.js';

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

class ChatGateway {
  onMessage() {
    return [];
  }
}

async function guardOf<T extends ThrottlerGuard>(guard: Type<T>, options: ThrottlerModuleOptions): Promise<T> {
  const moduleRef = await Test.createTestingModule({ imports: [ThrottlerModule.forRoot(options)], providers: [guard] }).compile();
  await moduleRef.init();
  return moduleRef.get(guard);
}

describe('WebSockets, handleRequest overridden', () => {
  it("counts by the socket's address on the storage and refuses over the limit", async () => {
    const guard = await guardOf(WsThrottlerGuard, [{ limit: 1, ttl: 60_000 }]);
    const client = { _socket: { remoteAddress: '198.51.100.4' } };
    const wsContext = () => {
      const context = new ExecutionContextHost([client, { event: 'message' }], ChatGateway, ChatGateway.prototype.onMessage);
      context.setType('ws');
      return context;
    };
    expect(await guard.canActivate(wsContext())).toBe(true);
    await expect(guard.canActivate(wsContext())).rejects.toThrow(ThrottlerException);
  });
});
