/** inject() helpers that parse JSON and keep headers. */
import type { FastifyInstance } from 'fastify';

export interface JsonResponse<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
}

export async function get<T = any>(app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<JsonResponse<T>> {
  const r = await app.inject({ method: 'GET', url, headers });
  return { status: r.statusCode, body: r.body ? (JSON.parse(r.body) as T) : (undefined as T), headers: r.headers };
}

export async function send<T = any>(
  app: FastifyInstance,
  method: 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  payload: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const r = await app.inject({
    method,
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  return { status: r.statusCode, body: r.body ? (JSON.parse(r.body) as T) : (undefined as T), headers: r.headers };
}
