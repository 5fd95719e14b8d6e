/** memcached-mock (rlf's test client) ships no types: it mimics the `memcached` package's callback API. */
declare module 'memcached-mock' {
  import Memcached from 'memcached';
  const MemcachedMock: typeof Memcached;
  export default MemcachedMock;
}
