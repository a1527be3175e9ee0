/**
 * Two Ajv instances: query strings and params coerce ("limit=5" → 5); bodies never coerce and never
 * drop unknown fields, so a strict body (buy, preflight, model creation) can answer unknown_parameter.
 * MCP tool arguments are validated like query strings (api/mcp): same schemas, same rules.
 */
import type { FastifyInstance } from 'fastify';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives as the module object.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

/** The validator of query strings (`lenient`: coerces, fills defaults) or of bodies (`strict`). */
export function createAjv(kind: 'lenient' | 'strict'): Ajv {
  const common = { useDefaults: true, removeAdditional: false as const, allErrors: false, strict: false };
  const ajv = new Ajv({ ...common, coerceTypes: kind === 'lenient' ? 'array' : false });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

export function installValidation(app: FastifyInstance): void {
  const lenient = createAjv('lenient');
  const strict = createAjv('strict');
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : lenient).compile(schema));
}
