/**
 * Reads served twice: as a REST route and as an MCP tool (api/mcp, OPERATOR-INTERFACE "MCP"). A route
 * module registers the tool next to its route, from the same pieces: the route's query schema, its
 * config (entitlements, day exemption) and the read function its handler calls. So a tool is never a
 * second copy of a read, and cannot drift from its REST twin.
 *
 * A tool's answer is the REST answer's `data` (and `pagination` for a page), as the route sends it.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type TObject, type TProperties, type TSchema } from 'typebox';
import type { Pagination } from '../../src/domain/envelope.js';
import type { Principal } from '../../src/domain/principal.js';

/** Who calls a tool: the key's principal, and the X-Service-Account header of the MCP request (an organization acting for its user). */
export interface ToolCaller {
  principal: Principal;
  serviceAccount: string | string[] | undefined;
  /** The HTTP request's id: a fault is logged under it. */
  requestId: string;
  /** Aborted when the caller goes away before its answer (absent: never). */
  signal?: AbortSignal;
}

/** The REST answer's members a tool returns. */
export interface ToolAnswer {
  data: unknown;
  pagination?: Pagination;
}

export interface ToolDef {
  /** The spec's tool name, e.g. list_leagues. */
  name: string;
  description: string;
  /** The REST twin, e.g. `GET /flow/v1/leagues/:id` (documentation, and the place its response shape is described). */
  rest: string;
  /** The twin's route config: what the key needs, and whether a call counts against the day window. */
  entitlements: readonly string[];
  dayExempt: boolean;
  /** The arguments: the twin's query parameters and path ids (by their REST names), as JSON Schema. */
  input: TObject;
  /** False for a tool that is not counted as a request (ask spends credits instead). */
  metered: boolean;
  /** Runs the read on arguments the input schema validated (defaults applied). */
  call(args: Record<string, unknown>, caller: ToolCaller): Promise<ToolAnswer>;
}

/** The tools of one app, registered by the route modules as they add their routes. */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDef>();

  add(def: ToolDef): void {
    if (this.tools.has(def.name)) throw new Error(`tool ${def.name} is registered twice`);
    this.tools.set(def.name, def);
  }

  get(name: string): ToolDef | undefined {
    return this.tools.get(name);
  }

  list(): ToolDef[] {
    return [...this.tools.values()];
  }
}

const registries = new WeakMap<FastifyInstance, ToolRegistry>();

/** The app's tool registry (created on first use). */
export function toolsOf(app: FastifyInstance): ToolRegistry {
  let r = registries.get(app);
  if (!r) {
    r = new ToolRegistry();
    registries.set(app, r);
  }
  return r;
}

/** A route's config as the tool needs it. */
export const twin = (config: { entitlements?: readonly string[]; dayExempt?: boolean }) => ({ entitlements: config.entitlements ?? [], dayExempt: config.dayExempt === true });

/**
 * A tool's argument schema: the route's path ids under their REST names (OPERATOR-INTERFACE: `id`
 * becomes league_id, contest_id, ...), then its query parameters. Closed: an argument the route does
 * not take is refused (unknown_parameter), so a misspelt filter is never silently ignored.
 */
export function toolInput(path: Record<string, TSchema>, query?: TObject): TObject {
  const props: TProperties = {};
  for (const [name, schema] of Object.entries(path)) props[name] = schema;
  if (query) for (const [name, schema] of Object.entries(query.properties)) props[name] = schema;
  const input = Type.Object(props, { additionalProperties: false });
  // A parameter with a default (limit) is never required of a caller, whatever the route's schema says.
  const required = ((input.required ?? []) as string[]).filter((name) => !('default' in (props[name] as object)));
  const { required: _all, ...rest } = input;
  return (required.length > 0 ? { ...rest, required } : rest) as TObject;
}

/** A path id argument, described. */
export const idArg = (schema: TSchema, description: string): TSchema => ({ ...schema, description });

/** A read answered as a serialized fragment (`"data":...` and maybe `,"pagination":...`, as the route sends it), parsed for a tool. */
export function fromFragment(fragment: string): ToolAnswer {
  return JSON.parse(`{${fragment}}`) as ToolAnswer;
}
