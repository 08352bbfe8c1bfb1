/**
 * The embedded broker's TLS listener (KW_MQTT_TLS_PORT, KW_MQTT_TLS_CERT, KW_MQTT_TLS_KEY): the certificate
 * chain and key read from their files and checked before anything starts, so that a missing file, a file
 * that is not PEM or a key of another certificate stops the start naming the variable, as a wrong value
 * does (`ConfigError`).
 */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError, type ConfigProblem } from '@kilowatch/core';

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** What the embedded broker's TLS listener is started with (`main.ts` hands it to ingest's broker). */
export interface MqttTlsListener {
  port: number;
  /** The certificate chain and its private key, as read (PEM). */
  cert: Buffer;
  key: Buffer;
}

/** The listener's port, certificate chain and key, or a `ConfigError` naming what is wrong with which file. */
export function readMqttTls(tls: { port: number; certFile: string; keyFile: string }): MqttTlsListener {
  const problems: ConfigProblem[] = [];
  const read = (name: string, file: string, what: string): Buffer | undefined => {
    try {
      return readFileSync(file);
    } catch (err) {
      problems.push({ name, value: file, expected: `a readable file with ${what} (${reason(err)})` });
      return undefined;
    }
  };
  const check = (
    name: string,
    file: string,
    expected: string,
    options: Parameters<typeof createSecureContext>[0],
  ) => {
    try {
      createSecureContext(options);
      return true;
    } catch (err) {
      problems.push({ name, value: file, expected: `${expected} (${reason(err)})` });
      return false;
    }
  };
  const cert = read('KW_MQTT_TLS_CERT', tls.certFile, 'the certificate chain (PEM)');
  const key = read('KW_MQTT_TLS_KEY', tls.keyFile, 'the private key (PEM)');
  const certOk = cert && check('KW_MQTT_TLS_CERT', tls.certFile, 'a certificate chain in PEM', { cert });
  const keyOk = key && check('KW_MQTT_TLS_KEY', tls.keyFile, 'a private key in PEM', { key });
  if (certOk && keyOk)
    check('KW_MQTT_TLS_KEY', tls.keyFile, "the private key of KW_MQTT_TLS_CERT's certificate", { cert, key });
  if (problems.length > 0 || !cert || !key) throw new ConfigError(problems);
  return { port: tls.port, cert, key };
}
