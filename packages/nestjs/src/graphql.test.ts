// GraphQL on a real Apollo Server (Express), with @nestjs/throttler's documented GraphQL guard:
// getRequestResponse overridden to read the request and response from the GraphQL context.
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { type ExecutionContext, Injectable, type INestApplication, Module, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { GqlExecutionContext, GraphQLModule, Query, Resolver } from '@nestjs/graphql';
import { ExpressAdapter } from '@nestjs/platform-express';
import { ThrottlerGuard } from './guard.js';
import { ThrottlerModule } from './module.js';
import type { ThrottlerModuleOptions } from './options.js';
import { startApp } from './test-app.js';

@Injectable()
class GqlThrottlerGuard extends ThrottlerGuard {
  protected override getRequestResponse(context: ExecutionContext) {
    const ctx = GqlExecutionContext.create(context).getContext();
    return { req: ctx.req, res: ctx.res };
  }
}

@Resolver()
class ItemsResolver {
  @Query()
  items() {
    return ['a', 'b'];
  }
}

function graphqlModule(options: ThrottlerModuleOptions): Type<unknown> {
  @Module({
    imports: [
      GraphQLModule.forRoot<ApolloDriverConfig>({
        driver: ApolloDriver,
        typeDefs: 'type Query { items: [String!]! }',
        context: ({ req, res }: { req: unknown; res: unknown }) => ({ req, res }),
      }),
      ThrottlerModule.forRoot(options),
    ],
    providers: [ItemsResolver, { provide: APP_GUARD, useClass: GqlThrottlerGuard }],
  })
  class GraphqlAppModule {}
  return GraphqlAppModule;
}

async function query(url: string) {
  const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ items }' }) });
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: (await response.json()) as { data?: unknown; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> },
  };
}

describe.each([
  ["@nestjs/throttler's mode", [{ limit: 2, ttl: 60_000 }]],
  ['the ratekit mode', { policy: 'all-or-nothing', throttlers: [{ limit: 2, ttl: 60_000 }] }],
] as Array<[string, ThrottlerModuleOptions]>)('GraphQL on Apollo Server and Express (%s)', (_mode, options) => {
  let app: INestApplication | undefined;
  afterEach(() => app?.close());

  it('throttles a query by the HTTP request behind it, with headers on its response', async () => {
    let url: string;
    ({ app, url } = await startApp(graphqlModule(options), () => new ExpressAdapter()));
    const first = await query(url);
    expect(first.body).toEqual({ data: { items: ['a', 'b'] } });
    expect(first.headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '60' });
    expect((await query(url)).body.data).toEqual({ items: ['a', 'b'] });
    const refused = await query(url);
    expect(refused.body.data).toBeNull();
    expect(refused.body.errors?.[0]?.message).toBe('ThrottlerException: Too Many Requests');
    expect(refused.headers['retry-after']).toBe('60');
  });
});
