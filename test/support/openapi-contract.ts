/**
 * Holds real responses to the OpenAPI document the service serves: the status must be one the
 * operation lists, the body must validate against that status's schema (Ajv, JSON Schema 2020-12 as
 * OpenAPI 3.1 uses it, formats checked), the content type must match, and every header the document
 * marks required must be there with a valid value. Requests to paths the document does not describe
 * (unknown paths, a test's own routes without an operationId) are not judged here.
 *
 * Test stacks (stack.ts) and the e2e client (e2e.ts) run every response through it, so any test that
 * sees a response the document does not describe fails at that request.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

type Json = Record<string, any>;

export interface ObservedResponse {
  method: string;
  url: string;
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

interface Operation {
  template: string;
  method: string;
  op: Json;
  pattern: RegExp;
  /** More literal characters wins: /contest-state/batch before /contests/{id}. */
  specificity: number;
}

const unescape = (token: string) => token.replace(/~1/g, '/').replace(/~0/g, '~');
const pointer = (...tokens: string[]) => tokens.map((t) => encodeURIComponent(t.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

export class OpenApiContract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  private readonly operations: Operation[] = [];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly doc: Json) {
    (addFormats as unknown as (a: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema(doc, 'openapi.json');
    for (const [template, item] of Object.entries(doc.paths ?? {}) as [string, Json][]) {
      for (const [method, op] of Object.entries(item)) {
        // Without an operationId a route is not part of the product's document (a test's own probe
        // route); the dedicated OpenAPI test requires one on every route the service registers.
        if (typeof op !== 'object' || !op.responses || !op.operationId) continue;
        // A parameter marked x-rest-of-path (a wildcard route's) may hold slashes; any other is one segment.
        const rest = new Set(((op.parameters ?? []) as Json[]).filter((p) => p.in === 'path' && p.schema?.['x-rest-of-path']).map((p) => `{${p.name}}`));
        const source = template
          .split(/(\{[^}]+\})/)
          .map((part) => (rest.has(part) ? '.+' : part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
          .join('');
        this.operations.push({ template, method: method.toUpperCase(), op, pattern: new RegExp(`^${source}$`), specificity: template.replace(/\{[^}]+\}/g, '').length });
      }
    }
  }

  /** The documented operation a request lands on, if any. */
  operation(method: string, url: string): Operation | undefined {
    const path = url.split('?')[0]!;
    return this.operations
      .filter((o) => o.method === method.toUpperCase() && o.pattern.test(path))
      .sort((a, b) => b.specificity - a.specificity)[0];
  }

  /** What is wrong with this response by the document; empty when it conforms or is not documented. */
  violations(r: ObservedResponse): string[] {
    const found = this.operation(r.method, r.url);
    if (!found) return [];
    const where = `${r.method} ${r.url} → ${r.status} (${found.op.operationId ?? found.template})`;
    // An exact status wins over its range (4XX), as OpenAPI says.
    const range = `${String(r.status)[0]}XX`;
    const key = found.op.responses[String(r.status)] !== undefined ? String(r.status) : range;
    const declared = found.op.responses[key] as Json | undefined;
    // A shared answer is a reference into components/responses.
    const at = declared?.$ref ? declared.$ref.replace(/^#\//, '').split('/').map(unescape) : ['paths', found.template, found.method.toLowerCase(), 'responses', key];
    const response = declared?.$ref ? this.resolve(declared.$ref) : declared;
    if (!response) return [`${where}: the document lists no ${r.status} for this operation (it lists ${Object.keys(found.op.responses).join(', ')})`];
    const problems: string[] = [];

    for (const [name, declared] of Object.entries(response.headers ?? {}) as [string, Json][]) {
      const header = declared.$ref ? this.resolve(declared.$ref) : declared;
      const value = r.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) problems.push(`${where}: required header ${name} is missing`);
        continue;
      }
      if (header.schema?.type === 'integer' && !/^-?\d+$/.test(String(value))) problems.push(`${where}: header ${name}=${String(value)} is not an integer`);
    }

    const contentType = String(r.headers['content-type'] ?? '').split(';')[0]!.trim();
    const media = response.content as Json | undefined;
    if (!media) {
      if (r.body.length > 0) problems.push(`${where}: the document declares no body, got ${r.body.length} bytes`);
      return problems;
    }
    if (!media[contentType]) return [...problems, `${where}: content type ${contentType || '(none)'} is not one of ${Object.keys(media).join(', ')}`];
    if (!contentType.endsWith('json')) return problems;
    let body: unknown;
    try {
      body = JSON.parse(r.body);
    } catch {
      return [...problems, `${where}: the body is not JSON: ${r.body.slice(0, 200)}`];
    }
    const validate = this.validator(pointer(...at, 'content', contentType, 'schema'));
    if (!validate(body)) {
      const errors = (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`);
      problems.push(`${where}: the body does not match the document: ${errors.join('; ')}; body: ${r.body.slice(0, 600)}`);
    }
    return problems;
  }

  resolve(ref: string): Json {
    return ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Json, token) => node[unescape(token)], this.doc);
  }

  private validator(path: string): ValidateFunction {
    let v = this.validators.get(path);
    if (!v) {
      v = this.ajv.compile({ $ref: `openapi.json#/${path}` });
      this.validators.set(path, v);
    }
    return v;
  }
}

export function assertConforms(contract: OpenApiContract, r: ObservedResponse): void {
  const problems = contract.violations(r);
  if (problems.length > 0) throw new Error(`response contradicts the OpenAPI document:\n${problems.join('\n')}`);
}

/**
 * Every app.inject() of this app (promise form) checks its response against the document the app
 * serves; the chain and callback forms pass through unchecked.
 */
export async function holdToContract(app: FastifyInstance): Promise<OpenApiContract> {
  const inject = app.inject.bind(app) as (opts?: InjectOptions | string) => Promise<Awaited<ReturnType<FastifyInstance['inject']>>>;
  const contract = new OpenApiContract(JSON.parse((await inject('/flow/v1/openapi.json')).body));
  const checked = async (opts: InjectOptions | string) => {
    const res = await inject(opts);
    const o = typeof opts === 'string' ? { method: 'GET', url: opts } : { method: String(opts.method ?? 'GET'), url: String(opts.url ?? opts.path ?? '/') };
    assertConforms(contract, { ...o, status: res.statusCode, headers: res.headers, body: res.body });
    return res;
  };
  (app as unknown as { inject: unknown }).inject = (opts?: InjectOptions | string, cb?: unknown) =>
    opts === undefined || cb !== undefined ? (inject as (o?: unknown, c?: unknown) => unknown)(opts, cb) : checked(opts);
  return contract;
}
