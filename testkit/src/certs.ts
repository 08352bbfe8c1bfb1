/**
 * Throw-away certificates for TLS tests, made by the `openssl` CLI at test time: a CA and a server
 * certificate it signs for 127.0.0.1 and localhost (P-256 keys, valid for a day from the moment they are
 * made). Nothing is committed to the repository and nothing outlives the test's temp dir.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findServerBinary } from './servers.ts';

const run = promisify(execFile);

/** The `openssl` CLI, or null (`serverMissing`'s rule: under CI=true a missing one throws). */
export function findOpenssl(): string | null {
  return findServerBinary('openssl', ['/usr/bin/openssl'], 'apt-get install -y openssl');
}

export interface TestCertificates {
  /** The CA's certificate (PEM file, and its text for a client's `ca`). */
  caFile: string;
  ca: string;
  /** The server's certificate and private key (PEM files), for 127.0.0.1 and localhost. */
  certFile: string;
  keyFile: string;
}

/**
 * A CA named `name` and a server certificate it signs for 127.0.0.1 and localhost, written to `dir`
 * (`<prefix>ca.pem`, `<prefix>server.pem`, `<prefix>server.key`).
 */
export async function makeTestCertificates(
  openssl: string,
  dir: string,
  { name = 'Kilowatch test CA', prefix = '' }: { name?: string; prefix?: string } = {},
): Promise<TestCertificates> {
  const f = (file: string) => join(dir, `${prefix}${file}`);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run(openssl, [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await run(openssl, [
    'req',
    '-new',
    ...ec,
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
    '-subj',
    '/CN=localhost',
  ]);
  await writeFile(
    f('server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n',
  );
  await run(openssl, [
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-set_serial',
    `0x${randomBytes(8).toString('hex')}`,
    '-days',
    '1',
    '-extfile',
    f('server.ext'),
    '-out',
    f('server.pem'),
  ]);
  return {
    caFile: f('ca.pem'),
    ca: await readFile(f('ca.pem'), 'utf8'),
    certFile: f('server.pem'),
    keyFile: f('server.key'),
  };
}
