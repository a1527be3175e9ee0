/**
 * Kits (spec "Caller context, performance, kits"; docs/kits.md):
 * - GET /flow/v1/kits: every kit's catalog entry, with `entitled` for the asking key. Any valid key.
 * - GET /flow/v1/kits/:slug: the kit with its content, the Markdown watermarked for the asking key;
 *   404 kit_not_found for a slug no kit has, 403 kit_not_entitled (details.entitlement) without
 *   kit:<slug>.
 * The kits are read from kits/ once, when the app is built.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { isKitSlug, KIT_SLUG_MAX, kitEntry, missingCompanions, type KitContent as KitContentT, type KitDefinition, type KitEntry as KitEntryT } from '../../../src/domain/kits.js';
import { ApiError } from '../../../src/errors.js';
import { loadKits, watermarkedCopy, watermarkIdentity } from '../../../src/kits.js';
import type { AppContext } from '../context.js';
import { errorsWith, Ok } from '../openapi/responses.js';
import type { Agrees, Same } from '../openapi/shapes.js';
import { sendEnvelope } from '../reply.js';

const closed = { additionalProperties: false } as const;
const Entitlements = (description: string) => Type.Array(Type.String(), { description });

const entryFields = {
  slug: Type.String({ description: 'the kit’s id in its URL' }),
  title: Type.String(),
  version: Type.Integer({ minimum: 1, description: 'raised whenever the guide changes in substance' }),
  summary: Type.String(),
  entitlement: Type.String({ description: 'kit:<slug>: what reading the kit needs' }),
  companion_entitlements: Entitlements('what following the guide needs, beyond the kit'),
  entitled: Type.Boolean({ description: 'the asking key holds `entitlement`' }),
};

export const KitEntry = Type.Object(entryFields, { $id: 'KitEntry', ...closed });
export const KitContent = Type.Object(
  {
    ...entryFields,
    markdown: Type.String({ description: 'the guide, watermarked for the asking key (invisible when rendered; docs/kits.md)' }),
    generated_at: Type.String({ format: 'date-time', description: 'when this copy was made' }),
    missing_companion_entitlements: Entitlements('the companion entitlements the asking key lacks'),
  },
  { $id: 'KitContent', ...closed },
);
const KitList = Type.Object({ kits: Type.Array(KitEntry) }, closed);
const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: KIT_SLUG_MAX, description: 'the kit’s slug' }) }, closed);

export type KitShapesAgree = [Agrees<Same<Static<typeof KitEntry>, KitEntryT>>, Agrees<Same<Static<typeof KitContent>, KitContentT>>];

const kitNotFound = (slug: string) => new ApiError(404, 'kit_not_found', `no kit is called ${JSON.stringify(slug)}; GET /flow/v1/kits lists them`, { slug });
const kitNotEntitled = (kit: KitDefinition) =>
  new ApiError(403, 'kit_not_entitled', `this key's plan does not include the kit ${JSON.stringify(kit.slug)} (${kit.entitlement})`, { entitlement: kit.entitlement, slug: kit.slug });

export function kitRoutes(app: FastifyInstance, ctx: AppContext, kits: readonly KitDefinition[] = loadKits()): void {
  const bySlug = new Map(kits.map((k) => [k.slug, k]));

  app.get(
    '/flow/v1/kits',
    { schema: { tags: ['kits'], summary: 'The kit catalog', operationId: 'listKits', response: { 200: Ok(KitList, 'Every kit, with whether the asking key may read it') } } },
    async (req, reply) => sendEnvelope(reply, ctx.clock.now(), { kits: kits.map((k) => kitEntry(k, req.principal.entitlements)) }),
  );

  app.get<{ Params: Static<typeof SlugParams> }>(
    '/flow/v1/kits/:slug',
    {
      schema: {
        tags: ['kits'],
        summary: 'A kit with its guide, watermarked for the asking key',
        operationId: 'getKit',
        params: SlugParams,
        response: {
          200: Ok(KitContent, 'The kit and the asking key’s copy of its guide'),
          403: errorsWith(['kit_not_entitled'], 'The key’s plan does not include this kit; details.entitlement names what it needs'),
          404: errorsWith(['kit_not_found'], 'No kit has this slug'),
        },
      },
    },
    async (req, reply) => {
      const { slug } = req.params;
      const kit = isKitSlug(slug) ? bySlug.get(slug) : undefined;
      if (!kit) throw kitNotFound(slug);
      const held = req.principal.entitlements;
      if (!held.has(kit.entitlement)) throw kitNotEntitled(kit);
      const now = ctx.clock.now();
      const body: KitContentT = {
        ...kitEntry(kit, held),
        markdown: watermarkedCopy(kit, ctx.config.kitWatermarkSecret, watermarkIdentity(req.principal)),
        generated_at: new Date(now).toISOString(),
        missing_companion_entitlements: missingCompanions(kit, held),
      };
      return sendEnvelope(reply, now, body);
    },
  );
}
