import { Body, Controller, Get, Post } from '@nestjs/common';
import { SkipThrottle, Throttle } from '@ratekit/nestjs';
import { WRITE_POLICY } from './policies.js';

export interface Item {
  id: number;
  name: string;
}

/** Every route of the controller: the module's throttler (the read policy), unless a route sets its own. */
@Controller('items')
export class ItemsController {
  private readonly items: Item[] = [{ id: 1, name: 'first item' }];

  /** The read policy (the module's throttler). */
  @Get()
  list(): Item[] {
    return this.items;
  }

  /** The write policy, in place of the read policy on this route. Nest answers 201. */
  @Throttle({ default: WRITE_POLICY })
  @Post()
  create(@Body() body: { name?: unknown } | undefined): Item {
    const item = { id: this.items.length + 1, name: String(body?.name ?? `item ${this.items.length + 1}`) };
    this.items.push(item);
    return item;
  }
}

@Controller('health')
export class HealthController {
  /** Not limited. */
  @SkipThrottle()
  @Get()
  check(): { ok: true } {
    return { ok: true };
  }
}
