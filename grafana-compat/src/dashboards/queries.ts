/**
 * Typed query builders for the two data sources the dashboards use. The foundation SDK ships builders
 * for the panels and the dashboard, and the `cog.Dataquery` interface for a data source's queries, but
 * none for the simPod JSON API or InfluxDB (InfluxQL) queries, so those two are built here against it.
 */
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import type * as common from '@grafana/grafana-foundation-sdk/common';
import type { Payload } from '../protocol.ts';

/** The data sources as provisioned (provisioning/datasources/kilowatch.yaml). */
export const JSON_API: common.DataSourceRef = { type: 'simpod-json-datasource', uid: 'kilowatch-json' };
export const INFLUXDB: common.DataSourceRef = { type: 'influxdb', uid: 'kilowatch-influxdb' };

export interface JsonApiQuery extends cog.Dataquery {
  refId: string;
  datasource: common.DataSourceRef;
  /** A metric `POST /metrics` lists. */
  target: string;
  payload: Payload;
  editorMode: 'builder';
}

export class JsonApiQueryBuilder implements cog.Builder<cog.Dataquery> {
  private readonly q: JsonApiQuery;
  constructor(refId: string, metric: string) {
    this.q = {
      refId,
      datasource: JSON_API,
      target: metric,
      payload: {},
      editorMode: 'builder',
      _implementsDataqueryVariant() {},
    };
  }
  device(device: string): this {
    this.q.payload.device = device;
    return this;
  }
  interval(interval: string): this {
    this.q.payload.interval = interval;
    return this;
  }
  stat(stat: 'avg' | 'min' | 'max'): this {
    this.q.payload.stat = stat;
    return this;
  }
  format(format: 'timeseries' | 'table'): this {
    this.q.payload.format = format;
    return this;
  }
  build(): JsonApiQuery {
    return { ...this.q, payload: { ...this.q.payload } };
  }
}

export interface InfluxQlQuery extends cog.Dataquery {
  refId: string;
  datasource: common.DataSourceRef;
  query: string;
  rawQuery: true;
  resultFormat: 'time_series' | 'table';
  alias?: string;
}

export class InfluxQlQueryBuilder implements cog.Builder<cog.Dataquery> {
  private readonly q: InfluxQlQuery;
  constructor(refId: string, query: string) {
    this.q = {
      refId,
      datasource: INFLUXDB,
      query,
      rawQuery: true,
      resultFormat: 'time_series',
      _implementsDataqueryVariant() {},
    };
  }
  alias(alias: string): this {
    this.q.alias = alias;
    return this;
  }
  table(): this {
    this.q.resultFormat = 'table';
    return this;
  }
  build(): InfluxQlQuery {
    return { ...this.q };
  }
}
