import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseRoles, ROLES } from '../../src/config.js';

describe('config', () => {
  it('has the operator interface defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      streamPort: 8081,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/flow',
      redisUrl: 'redis://127.0.0.1:6379',
      redisPrefix: 'flow',
      clickhouseUrl: null,
      venues: ['sim'],
      simSeed: 1,
      streamMaxConnectionsPerKey: 3,
    });
    expect(c.roles).toEqual([...ROLES]);
    expect(c.dataDir.endsWith('/data')).toBe(true);
  });
  it('reads every variable', () => {
    const c = loadConfig({ PORT: '9000', STREAM_PORT: '9001', FLOW_ROLES: 'api,gateway', FLOW_VENUES: 'sim, other', FLOW_SIM_SEED: '7', CLICKHOUSE_URL: 'http://ch:8123', FLOW_ADMIN_TOKEN: 's3cret', FLOW_STREAM_MAX_CONNECTIONS_PER_KEY: '5', REDIS_PREFIX: 'x' });
    expect(c).toMatchObject({ port: 9000, streamPort: 9001, roles: ['api', 'gateway'], venues: ['sim', 'other'], simSeed: 7, clickhouseUrl: 'http://ch:8123', adminToken: 's3cret', streamMaxConnectionsPerKey: 5, redisPrefix: 'x' });
  });
  it('event-log retention: the documented floor by default; may be raised, never lowered below the resume guarantee', () => {
    expect(loadConfig({}).eventLog).toEqual({ minEvents: 10_000, minAgeSeconds: 300, maxEvents: 100_000 });
    expect(loadConfig({ FLOW_EVENT_LOG_MIN_EVENTS: '20000', FLOW_EVENT_LOG_MIN_AGE_SECONDS: '600', FLOW_EVENT_LOG_MAX_EVENTS: '50000' }).eventLog).toEqual({ minEvents: 20_000, minAgeSeconds: 600, maxEvents: 50_000 });
    expect(() => loadConfig({ FLOW_EVENT_LOG_MIN_EVENTS: '5000' })).toThrow(/FLOW_EVENT_LOG_MIN_EVENTS/);
    expect(() => loadConfig({ FLOW_EVENT_LOG_MIN_AGE_SECONDS: '60' })).toThrow(/FLOW_EVENT_LOG_MIN_AGE_SECONDS/);
    expect(() => loadConfig({ FLOW_EVENT_LOG_MIN_EVENTS: '20000', FLOW_EVENT_LOG_MAX_EVENTS: '15000' })).toThrow(/FLOW_EVENT_LOG_MAX_EVENTS/);
  });
  it('real-money legs: the buy waits 15 s for a decision by default; an intent is sendable for at least as long as the buy waits', () => {
    expect(loadConfig({}).execute).toEqual({ waitMs: 15_000, intentTtlMs: 60_000 });
    expect(loadConfig({ FLOW_EXECUTE_WAIT_MS: '90000' }).execute).toEqual({ waitMs: 90_000, intentTtlMs: 90_000 });
    expect(loadConfig({ FLOW_EXECUTE_WAIT_MS: '2000', FLOW_EXECUTE_INTENT_TTL_MS: '5000' }).execute).toEqual({ waitMs: 2_000, intentTtlMs: 5_000 });
    expect(() => loadConfig({ FLOW_EXECUTE_WAIT_MS: '5000', FLOW_EXECUTE_INTENT_TTL_MS: '4000' })).toThrow(/FLOW_EXECUTE_INTENT_TTL_MS/);
    expect(() => loadConfig({ FLOW_EXECUTE_WAIT_MS: '0' })).toThrow(/FLOW_EXECUTE_WAIT_MS/);
  });
  it('Polymarket: the public hosts by default; each base URL, the tag and the event cap from the environment', () => {
    expect(loadConfig({}).polymarket).toEqual({
      urls: { gamma: 'https://gamma-api.polymarket.com', clob: 'https://clob.polymarket.com', ws: 'wss://ws-subscriptions-clob.polymarket.com' },
      tagId: null,
      maxEvents: 100,
    });
    const c = loadConfig({
      FLOW_POLYMARKET_GAMMA_URL: 'http://127.0.0.1:9100/',
      FLOW_POLYMARKET_CLOB_URL: 'http://127.0.0.1:9100',
      FLOW_POLYMARKET_WS_URL: 'ws://127.0.0.1:9101',
      FLOW_POLYMARKET_TAG_ID: '1',
      FLOW_POLYMARKET_MAX_EVENTS: '20',
    });
    expect(c.polymarket).toEqual({ urls: { gamma: 'http://127.0.0.1:9100', clob: 'http://127.0.0.1:9100', ws: 'ws://127.0.0.1:9101' }, tagId: '1', maxEvents: 20 });
    expect(() => loadConfig({ FLOW_POLYMARKET_WS_URL: 'https://x' })).toThrow(/FLOW_POLYMARKET_WS_URL/);
    expect(() => loadConfig({ FLOW_POLYMARKET_GAMMA_URL: 'not a url' })).toThrow(/FLOW_POLYMARKET_GAMMA_URL/);
    expect(() => loadConfig({ FLOW_POLYMARKET_TAG_ID: 'sports' })).toThrow(/FLOW_POLYMARKET_TAG_ID/);
    expect(() => loadConfig({ FLOW_POLYMARKET_MAX_EVENTS: '0' })).toThrow(/FLOW_POLYMARKET_MAX_EVENTS/);
  });
  it('has no built-in secret: unset ones come from the secret source, each its own', () => {
    const asked: [string, string][] = [];
    const c = loadConfig({ FLOW_DATA_DIR: '/srv/flow' }, (name, file) => {
      asked.push([name, file]);
      return `from-source-${name}`;
    });
    expect(asked.sort()).toEqual([
      ['adminToken', '/srv/flow/admin-token'],
      ['aiKeySecret', '/srv/flow/ai-key-secret'],
      ['cursorSecret', '/srv/flow/cursor-secret'],
      ['jwtSecret', '/srv/flow/jwt-secret'],
      ['kitWatermarkSecret', '/srv/flow/kit-watermark-secret'],
    ]);
    expect([c.adminToken, c.jwtSecret, c.cursorSecret]).toEqual(['from-source-adminToken', 'from-source-jwtSecret', 'from-source-cursorSecret']);
    // Without a source (tests, benches), each process gets random secrets, never a fixed value.
    const a = loadConfig({});
    const b = loadConfig({});
    for (const name of ['adminToken', 'jwtSecret', 'cursorSecret', 'kitWatermarkSecret', 'aiKeySecret'] as const) {
      expect(a[name]).not.toBe(b[name]);
      expect(a[name].length).toBeGreaterThanOrEqual(43);
    }
    expect(a.cursorSecret).not.toContain(a.jwtSecret);
    expect([a.adminToken, a.jwtSecret]).not.toContain('dev-admin');
    // Variables win, and the cursor key is not derived from the JWT secret.
    const v = loadConfig({ FLOW_ADMIN_TOKEN: 'adm', FLOW_JWT_SECRET: 'jwt', FLOW_CURSOR_SECRET: 'cur', FLOW_KIT_WATERMARK_SECRET: 'kit', FLOW_AI_KEY_SECRET: 'ai' }, () => {
      throw new Error('not asked when set');
    });
    expect([v.adminToken, v.jwtSecret, v.cursorSecret, v.kitWatermarkSecret, v.aiKeySecret]).toEqual(['adm', 'jwt', 'cur', 'kit', 'ai']);
    expect(loadConfig({ FLOW_JWT_SECRET: 'jwt' }).cursorSecret).not.toContain('jwt');
  });
  it('AI providers: the public APIs by default, no managed key; base URLs checked, kept without a trailing slash', () => {
    expect(loadConfig({}).ai).toEqual({ anthropic: { baseUrl: 'https://api.anthropic.com', apiKey: null }, openai: { baseUrl: 'https://api.openai.com', apiKey: null } });
    const c = loadConfig({ FLOW_ANTHROPIC_BASE_URL: 'http://127.0.0.1:9999/proxy/', FLOW_OPENAI_BASE_URL: 'http://llm.internal', FLOW_OPENAI_API_KEY: 'sk-x' });
    expect(c.ai).toEqual({ anthropic: { baseUrl: 'http://127.0.0.1:9999/proxy', apiKey: null }, openai: { baseUrl: 'http://llm.internal', apiKey: 'sk-x' } });
    for (const bad of ['ftp://x', 'not a url', 'http://x/?q=1', 'https://user:pw@x']) expect(() => loadConfig({ FLOW_OPENAI_BASE_URL: bad }), bad).toThrow(/FLOW_OPENAI_BASE_URL/);
  });
  it('ask’s planner: FLOW_ASK_PROVIDER, else the provider of a managed key (Anthropic first), else the rule-based planner; the model checked', () => {
    expect(loadConfig({}).ask).toEqual({ provider: null, model: 'claude-sonnet-4-5' });
    expect(loadConfig({ FLOW_OPENAI_API_KEY: 'sk-o' }).ask).toEqual({ provider: 'openai', model: 'gpt-4.1-mini' });
    expect(loadConfig({ FLOW_OPENAI_API_KEY: 'sk-o', FLOW_ANTHROPIC_API_KEY: 'sk-a' }).ask.provider).toBe('anthropic');
    expect(loadConfig({ FLOW_ANTHROPIC_API_KEY: 'sk-a', FLOW_ASK_PROVIDER: 'rule' }).ask.provider).toBeNull();
    // Named without a managed key: accounts with their own key plan through it (the others fall back to rules).
    expect(loadConfig({ FLOW_ASK_PROVIDER: 'openai', FLOW_ASK_MODEL: 'gpt-x' }).ask).toEqual({ provider: 'openai', model: 'gpt-x' });
    expect(() => loadConfig({ FLOW_ASK_PROVIDER: 'gemini' })).toThrow(/FLOW_ASK_PROVIDER must be anthropic, openai or rule/);
    expect(() => loadConfig({ FLOW_ASK_PROVIDER: 'anthropic', FLOW_ASK_MODEL: 'a model' })).toThrow(/FLOW_ASK_MODEL/);
  });
  it('refuses bad values with a message naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT must be an integer/);
    expect(() => loadConfig({ PORT: '70000' })).toThrow(ConfigError);
    expect(() => loadConfig({ FLOW_STREAM_MAX_CONNECTIONS_PER_KEY: '0' })).toThrow(/FLOW_STREAM_MAX_CONNECTIONS_PER_KEY/);
    expect(() => parseRoles('api,web')).toThrow(/unknown role "web"/);
  });
  it('the stream gateway on a thread of its own unless FLOW_GATEWAY_THREAD says otherwise; a value that is not a boolean is refused', () => {
    expect(loadConfig({}).gatewayThread).toBe(true);
    expect(loadConfig({ FLOW_GATEWAY_THREAD: 'false' }).gatewayThread).toBe(false);
    expect(() => loadConfig({ FLOW_GATEWAY_THREAD: 'sometimes' })).toThrow(/FLOW_GATEWAY_THREAD/);
  });
  it('all means every role', () => {
    expect(parseRoles('all')).toEqual([...ROLES]);
    expect(parseRoles(undefined)).toEqual([...ROLES]);
  });
  it('hot-state retention of closed contests: an hour unless FLOW_HOT_RETENTION_SECONDS says otherwise', () => {
    expect(loadConfig({}).hotRetentionSeconds).toBe(3600);
    expect(loadConfig({ FLOW_HOT_RETENTION_SECONDS: '90' }).hotRetentionSeconds).toBe(90);
    expect(() => loadConfig({ FLOW_HOT_RETENTION_SECONDS: '0' })).toThrow(/FLOW_HOT_RETENTION_SECONDS/);
  });
});
