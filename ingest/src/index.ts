export {
  DEFAULT_METER_LIMITS,
  INGEST_SUBSCRIPTIONS,
  type IngestLogger,
  type IngestOptions,
  type IngestRuntime,
  type MeterLimits,
  startIngest,
  subscriptionTopics,
} from './bridge.ts';
export {
  type BrokerLimits,
  checkMeterTopic,
  DEFAULT_BROKER_LIMITS,
  type EmbeddedBroker,
  type EmbeddedBrokerOptions,
  type EmbeddedBrokerTls,
  type MeterConnection,
  type MeterTopicCache,
  type ServiceAccount,
  startEmbeddedBroker,
} from './broker.ts';
export type { DeadLetter } from './deadLetters.ts';
export {
  type Decoded,
  decodeMessage,
  MAX_PAYLOAD_BYTES,
  REJECT_REASONS,
  type RejectReason,
} from './decoders/index.ts';
export type { DeviceState, LiveBus } from './liveBus.ts';
export { type LiveSubscriber, startLiveSubscriber } from './liveSubscriber.ts';
export { createMemoryMeterAuth, type MemoryMeterAuth } from './meterAuth.ts';
export { type BackfillOptions, backfillHistory } from './simulator/backfill.ts';
export { DEMO_DEVICES, type SimulatedDevice, type SimulatedKind } from './simulator/devices.ts';
export { type Simulator, type SimulatorOptions, startSimulator } from './simulator/live.ts';
export { type MeterOutbox, meterOutbox } from './simulator/outbox.ts';
export { type SimulationOptions, simulatedReading } from './simulator/readings.ts';
