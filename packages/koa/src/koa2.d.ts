// Tests run on Koa 2 through the `koa2` alias (npm:koa@^2); Koa 2's API is the subset of Koa 3's that the tests use.
declare module 'koa2' {
  import Koa from 'koa';
  export default Koa;
}
