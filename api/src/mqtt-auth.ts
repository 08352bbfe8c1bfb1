/** The embedded broker's check of a meter's credentials, against the metadata database. */
import type { BrokerAuth, MeterVerdict } from '@kilowatch/core';
import type { DevicesRepository } from './plugins/app/devices-repository.ts';
import { verifyMeterPassword } from './plugins/app/meter-credentials.ts';

/** `devices` is looked up at each connection: null until the app is up (every meter is refused until then). */
export function databaseMeterAuth(devices: () => DevicesRepository | undefined): BrokerAuth {
  return {
    async verifyMeter(username, password): Promise<MeterVerdict> {
      const repo = devices();
      if (!repo || username.length > 64) return null;
      const account = await repo.mqttAccount(username);
      if (!account) return null;
      return {
        deviceKey: account.deviceKey,
        ok: verifyMeterPassword(password, account.passwordHash),
        stockTopics: account.stockTopics,
      };
    },
  };
}
