import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSmtpMailer } from './mailer.ts';

/** A minimal SMTP receiver on loopback: enough of RFC 5321 for one plain-text message. */
function smtpSink() {
  const received: string[] = [];
  const server = createServer((socket: Socket) => {
    let data = false;
    let buffer = '';
    const say = (line: string) => socket.write(`${line}\r\n`);
    say('220 localhost ESMTP test');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (data) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          received.push(buffer.slice(0, end));
          buffer = buffer.slice(end + 5);
          data = false;
          say('250 OK queued');
          continue;
        }
        const nl = buffer.indexOf('\r\n');
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') say('250 localhost');
        else if (verb === 'DATA') {
          data = true;
          say('354 go ahead');
        } else if (verb === 'QUIT') {
          say('221 bye');
          socket.end();
        } else say('250 OK');
      }
    });
  });
  return { server, received };
}

describe('SMTP mailer', () => {
  const sink = smtpSink();
  let port = 0;
  beforeAll(async () => {
    sink.server.listen(0, '127.0.0.1');
    await once(sink.server, 'listening');
    port = (sink.server.address() as { port: number }).port;
  });
  afterAll(() => {
    sink.server.close();
  });

  it('delivers a message through SMTP', async () => {
    const mailer = await createSmtpMailer(
      `smtp://127.0.0.1:${port}?ignoreTLS=true`,
      'Kilowatch <no-reply@example.com>',
    );
    await mailer.send({
      to: 'user@example.com',
      subject: 'Kilowatch password reset',
      text: 'Open this link: http://x/reset',
    });
    expect(sink.received).toHaveLength(1);
    const message = sink.received[0]!;
    expect(message).toMatch(/^To: user@example\.com$/m);
    expect(message).toMatch(/^Subject: Kilowatch password reset$/m);
    expect(message).toContain('Open this link');
  });
});
