import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { BatchSpanProcessor, NodeTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-node';
import { ConfigError } from '../../config/app-config';
import { setTracingTracer } from './tracing';

export const TRACER_NAME = 'eventstore';

export interface TracingSettings {
  /** Where spans go (OTLP/HTTP): the traces endpoint as given, or the general endpoint + /v1/traces. */
  url: string;
  serviceName: string;
}

/**
 * The standard OpenTelemetry variables: tracing is on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_EXPORTER_OTLP_ENDPOINT is set (and OTEL_SDK_DISABLED is not `true`); null otherwise.
 * A set endpoint that is not an http(s) URL is refused at start.
 */
export function tracingSettings(env: Record<string, string | undefined>): TracingSettings | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const general = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!specific && !general) return null;
  const url = specific || `${general!.replace(/\/+$/, '')}/v1/traces`;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    const name = specific ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
    throw new ConfigError([`${name}: must be an http(s) URL (OTLP/HTTP), got '${specific || general}'`]);
  }
  return { url, serviceName: env.OTEL_SERVICE_NAME?.trim() || 'eventstore' };
}

export interface Tracing {
  readonly provider: NodeTracerProvider;
  /** Exports what is buffered (tests read the in-memory exporter after it). */
  flush(): Promise<void>;
  /** Exports what is left, then unregisters everything (tracing is off again). */
  shutdown(): Promise<void>;
}

/**
 * Registers the tracer provider (and with it the async-hooks context manager and the W3C
 * propagator) when the environment asks for tracing; null, and nothing registered, otherwise.
 * `exporter` replaces the OTLP one: tests pass the SDK's InMemorySpanExporter (tracing is then on
 * whatever the environment says).
 */
export function startTracing(env: Record<string, string | undefined>, exporter?: SpanExporter): Tracing | null {
  const settings = tracingSettings(env);
  if (!settings && !exporter) return null;
  const serviceName = settings?.serviceName ?? (env.OTEL_SERVICE_NAME?.trim() || 'eventstore');
  const provider = new NodeTracerProvider({
    // The SDK's own attributes (telemetry.sdk.*) with our service name over its default one.
    resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName })),
    spanProcessors: [new BatchSpanProcessor(exporter ?? new OTLPTraceExporter({ url: settings!.url }))],
  });
  provider.register();
  setTracingTracer(trace.getTracer(TRACER_NAME));
  return {
    provider,
    flush: () => provider.forceFlush(),
    async shutdown() {
      setTracingTracer(undefined);
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
