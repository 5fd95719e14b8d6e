import type { ESLint, Rule } from 'eslint';

export declare const noPackageInternals: Rule.RuleModule;
declare const plugin: ESLint.Plugin;
export default plugin;
