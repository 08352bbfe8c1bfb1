import { describe, expect, it } from 'vitest';
import {
  type BrokerSettings,
  defaultTopics,
  nativeCommand,
  nativeExample,
  shellQuote,
  shellyCommand,
  shellyConfig,
  tasmotaCommand,
} from './connectionSettings.ts';

const settings: BrokerSettings = {
  host: 'mqtt.example.net',
  port: 1883,
  tls: false,
  username: 'm-aabbccddeeff',
  password: "p'ss w0rd",
  deviceKey: 'aabbccddeeff',
  topics: defaultTopics('aabbccddeeff'),
};

describe('connection settings', () => {
  it('names the three topics of docs/api.md §MQTT', () => {
    expect(defaultTopics('aabbccddeeff')).toEqual({
      native: 'kilowatch/meters/aabbccddeeff/readings',
      tasmota: 'tele/aabbccddeeff/SENSOR',
      shelly: 'aabbccddeeff/events/rpc',
    });
  });

  it('quotes shell arguments so a password with quotes and spaces survives', () => {
    expect(shellQuote("p'ss w0rd")).toBe(`'p'\\''ss w0rd'`);
  });

  it('publishes a native reading with the account and topic', () => {
    const payload = nativeExample({ vave1: 230.5 }, Date.UTC(2026, 10, 22, 10));
    expect(JSON.parse(payload)).toEqual({ ts: '2026-11-22T10:00:00.000Z', values: { vave1: 230.5 } });
    const cmd = nativeCommand(settings, payload);
    expect(cmd).toContain('-h mqtt.example.net -p 1883');
    expect(cmd).toContain(`-u 'm-aabbccddeeff' -P 'p'\\''ss w0rd'`);
    expect(cmd).toContain(`-t 'kilowatch/meters/aabbccddeeff/readings'`);
  });

  it('leaves the account out when the broker takes meters without one', () => {
    const cmd = nativeCommand({ ...settings, username: null, password: null }, '{}');
    expect(cmd).not.toContain('-u ');
    expect(cmd).not.toContain('-P ');
    expect(tasmotaCommand({ ...settings, username: null, password: null })).not.toContain('MqttUser');
  });

  it('sets Tasmota up so its telemetry lands on tele/<key>/SENSOR', () => {
    expect(tasmotaCommand(settings)).toBe(
      "Backlog MqttHost mqtt.example.net; MqttPort 1883; MqttUser m-aabbccddeeff; MqttPassword p'ss w0rd; Topic aabbccddeeff; FullTopic %prefix%/%topic%/; TelePeriod 10",
    );
  });

  it('sets a Shelly up so its notifications land on <key>/events/rpc', () => {
    const config = shellyConfig(settings);
    expect(config).toMatchObject({
      enable: true,
      server: 'mqtt.example.net:1883',
      topic_prefix: 'aabbccddeeff',
      user: 'm-aabbccddeeff',
      pass: "p'ss w0rd",
      rpc_ntf: true,
    });
    const cmd = shellyCommand(settings, '192.168.1.50');
    expect(cmd).toMatch(/^curl -X POST -d '.*' http:\/\/192\.168\.1\.50\/rpc\/MQTT\.SetConfig$/);
  });
});
