// The one name the workerd tests import from the Workers runtime (no @cloudflare/workers-types here).
declare module 'cloudflare:workers' {
  export const env: Record<string, unknown>;
}
