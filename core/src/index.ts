export * from './devices.ts';
export * from './energy.ts';
export * from './params.ts';
export * from './readings.ts';
export * from './time.ts';
