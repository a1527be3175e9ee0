/** GET /flow/v1/auth/me: the caller context (spec "Caller context"). Exempt from the daily budget. */
import type { FastifyInstance } from 'fastify';
import { creditsOf } from '../../../src/store/pg/credits.js';
import { usageId } from '../../../src/store/redis/gate.js';
import type { AppContext } from '../context.js';
import { Ok } from '../openapi/responses.js';
import { CallerContext } from '../openapi/shapes.js';
import { sendEnvelope } from '../reply.js';

export function meRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get(
    '/flow/v1/auth/me',
    { schema: { tags: ['account'], summary: 'Caller context', operationId: 'getCallerContext', response: { 200: Ok(CallerContext, 'Who is calling, with the key’s limits and usage') } }, config: { dayExempt: true } },
    async (req, reply) => {
      const p = req.principal;
      const now = ctx.clock.now();
      const [usage, credits] = await Promise.all([ctx.gate.usage(usageId(p), now), creditsOf(ctx.pool, p.workspace_id, p.plan, now)]);
      const body: CallerContext = {
        auth_method: p.auth_method,
        router_account_id: p.router_account_id,
        workspace_id: p.workspace_id,
        plan: p.plan,
        environment: p.environment,
        can_execute: p.entitlements.has('trade:execute') && p.key_type === 'execution',
        entitlements: [...p.entitlements].sort(),
        current_key: {
          key_id: p.key_id,
          key_type: p.key_type,
          rate_limit_per_minute: p.rate_limit_per_minute,
          rate_limit_per_day: p.rate_limit_per_day,
        },
        usage: { requests_last_24h: usage.requests24h, requests_last_7d: usage.requests7d, errors_last_24h: usage.errors24h },
        // The workspace's reasoning credits this UTC month (src/store/pg/credits.ts).
        credits,
      };
      return sendEnvelope(reply, now, body);
    },
  );
}
