/**
 * Two Ajv instances: query strings and params coerce ("limit=5" → 5); bodies never coerce and never
 * drop unknown fields, so a strict body (buy, preflight, model creation) can answer unknown_parameter.
 */
import type { FastifyInstance } from 'fastify';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives as the module object.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

export function installValidation(app: FastifyInstance): void {
  const common = { useDefaults: true, removeAdditional: false as const, allErrors: false, strict: false };
  const lenient = new Ajv({ ...common, coerceTypes: 'array' });
  const strict = new Ajv({ ...common, coerceTypes: false });
  (addFormats as unknown as (a: Ajv) => void)(lenient);
  (addFormats as unknown as (a: Ajv) => void)(strict);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : lenient).compile(schema));
}
