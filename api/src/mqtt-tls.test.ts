/**
 * The embedded broker's certificate and key as the start reads them (`readMqttTls`): a file missing, not
 * PEM, or a key of another certificate is refused naming its variable; throw-away certificates from
 * `openssl` (testkit) stand for the real ones.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@kilowatch/core';
import { findOpenssl, makeTestCertificates, type TestCertificates } from '@kilowatch/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMqttTls } from './mqtt-tls.ts';

const openssl = findOpenssl();

describe.skipIf(!openssl)('readMqttTls', () => {
  let dir: string;
  let certs: TestCertificates;
  let other: TestCertificates;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kw-mqtt-tls-read-'));
    certs = await makeTestCertificates(openssl as string, dir);
    other = await makeTestCertificates(openssl as string, dir, { prefix: 'other-' });
    await writeFile(join(dir, 'notes.txt'), 'not a certificate\n');
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const problems = (files: { certFile: string; keyFile: string }) => {
    try {
      readMqttTls({ port: 8883, ...files });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems.map((p) => `${p.name}=${p.value}: ${p.expected}`);
    }
    throw new Error('expected a refusal');
  };

  it('reads a certificate chain and its key', () => {
    const tls = readMqttTls({ port: 8883, certFile: certs.certFile, keyFile: certs.keyFile });
    expect(tls.port).toBe(8883);
    expect(String(tls.cert)).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(String(tls.key)).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  });

  it('names a missing file, a file that is not PEM, and a key of another certificate', () => {
    const missing = join(dir, 'missing.pem');
    const notes = join(dir, 'notes.txt');
    expect(problems({ certFile: missing, keyFile: certs.keyFile })).toEqual([
      expect.stringMatching(
        new RegExp(
          `^KW_MQTT_TLS_CERT=${missing}: a readable file with the certificate chain \\(PEM\\) \\(ENOENT`,
        ),
      ),
    ]);
    expect(problems({ certFile: notes, keyFile: notes })).toEqual([
      expect.stringMatching(new RegExp(`^KW_MQTT_TLS_CERT=${notes}: a certificate chain in PEM \\(.+\\)$`)),
      expect.stringMatching(new RegExp(`^KW_MQTT_TLS_KEY=${notes}: a private key in PEM \\(.+\\)$`)),
    ]);
    // The key where the certificate should be is not a certificate either.
    expect(problems({ certFile: certs.keyFile, keyFile: certs.keyFile })).toEqual([
      expect.stringMatching(/^KW_MQTT_TLS_CERT=.*: a certificate chain in PEM/),
    ]);
    expect(problems({ certFile: certs.certFile, keyFile: other.keyFile })).toEqual([
      expect.stringMatching(
        new RegExp(
          `^KW_MQTT_TLS_KEY=${other.keyFile}: the private key of KW_MQTT_TLS_CERT's certificate \\(.+\\)$`,
        ),
      ),
    ]);
  });
});
