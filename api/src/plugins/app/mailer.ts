/** Outgoing mail: SMTP through nodemailer when configured, otherwise written to the server log. */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    mailer: Mailer;
  }
}

export async function createSmtpMailer(smtpUrl: string, from: string): Promise<Mailer> {
  const { createTransport } = await import('nodemailer');
  const transport = createTransport(smtpUrl);
  return {
    async send(m) {
      await transport.sendMail({ from, to: m.to, subject: m.subject, text: m.text });
    },
  };
}

export function createLogMailer(app: FastifyInstance): Mailer {
  return {
    async send(m) {
      app.log.info({ mail: { to: m.to, subject: m.subject, text: m.text } }, 'mail (no SMTP configured)');
    },
  };
}

export default fp(
  async (app: FastifyInstance, opts: { mailer?: Mailer }) => {
    const mailer =
      opts.mailer ??
      (app.config.smtpUrl
        ? await createSmtpMailer(app.config.smtpUrl, app.config.mailFrom)
        : createLogMailer(app));
    app.decorate('mailer', mailer);
  },
  { name: 'mailer' },
);
