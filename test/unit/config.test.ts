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
      adminToken: 'dev-admin',
      adminTokenIsDefault: true,
      streamMaxConnectionsPerKey: 3,
    });
    expect(c.roles).toEqual([...ROLES]);
    expect(c.dataDir.endsWith('/data')).toBe(true);
  });
  it('reads every variable', () => {
    const c = loadConfig({ PORT: '9000', STREAM_PORT: '9001', FLOW_ROLES: 'api,gateway', FLOW_VENUES: 'sim, other', FLOW_SIM_SEED: '7', CLICKHOUSE_URL: 'http://ch:8123', FLOW_ADMIN_TOKEN: 's3cret', FLOW_STREAM_MAX_CONNECTIONS_PER_KEY: '5', REDIS_PREFIX: 'x' });
    expect(c).toMatchObject({ port: 9000, streamPort: 9001, roles: ['api', 'gateway'], venues: ['sim', 'other'], simSeed: 7, clickhouseUrl: 'http://ch:8123', adminToken: 's3cret', adminTokenIsDefault: false, streamMaxConnectionsPerKey: 5, redisPrefix: 'x' });
  });
  it('refuses bad values with a message naming the variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT must be an integer/);
    expect(() => loadConfig({ PORT: '70000' })).toThrow(ConfigError);
    expect(() => loadConfig({ FLOW_STREAM_MAX_CONNECTIONS_PER_KEY: '0' })).toThrow(/FLOW_STREAM_MAX_CONNECTIONS_PER_KEY/);
    expect(() => parseRoles('api,web')).toThrow(/unknown role "web"/);
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
