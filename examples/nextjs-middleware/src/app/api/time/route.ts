// A route with no limit of its own: only the proxy's (5 requests per 10 seconds per client) applies.
export function GET() {
  return Response.json({ now: new Date().toISOString() });
}
