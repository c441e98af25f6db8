import { getMetadataStorage, ValidationArguments, ValidationTypes } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

/** True only when the object passes every rule of its DTO; false: ask class-validator (which also says why). */
export type CompiledDtoCheck = (instance: object) => boolean;

type Validate = (value: unknown, args: ValidationArguments) => boolean | Promise<boolean>;

interface PropertyPlan {
  property: string;
  /** IsOptional / ValidateIf: when one says no, the property's rules are skipped (as class-validator does). */
  conditions: ((object: object, value: unknown) => boolean)[];
  /** IsDefined first, then the others, each with its arguments object (reused: the checks are synchronous). */
  rules: { validate: Validate; args: ValidationArguments }[];
}

const NOTHING = Object.freeze({});

const SUPPORTED = new Set<string>([ValidationTypes.IS_DEFINED, ValidationTypes.CUSTOM_VALIDATION, ValidationTypes.CONDITIONAL_VALIDATION]);

/**
 * The rules class-validator keeps for `dto`, compiled once into one function over the same
 * validator functions (isString, isLength, matches, the custom ones…), without what validateSync
 * does per call: look the metadata up, group it by property, build a ValidationError per property.
 * A valid body, the common case on the append path, is answered by the compiled function alone;
 * an invalid one still goes through validateSync, whose ValidationErrors make the error message,
 * so every refusal is word for word what it was. Null when the DTO uses anything this does not
 * mirror exactly (nested or `each` validation, async constraints, groups, whitelists): then every
 * body goes through validateSync, as before.
 */
export function compileDtoCheck(dto: new () => object): CompiledDtoCheck | null {
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(dto, '', false, false, undefined) as ValidationMetadata[];
  if (metadatas.length === 0) return null;
  const plans = new Map<string, PropertyPlan>();
  for (const m of metadatas) {
    if (!SUPPORTED.has(m.type) || m.each || (m.groups && m.groups.length > 0) || m.always) return null;
    const plan = plans.get(m.propertyName) ?? { property: m.propertyName, conditions: [], rules: [] };
    plans.set(m.propertyName, plan);
    if (m.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      plan.conditions.push(m.constraints[0] as (object: object, value: unknown) => boolean);
      continue;
    }
    for (const c of storage.getTargetValidatorConstraints(m.constraintCls)) {
      if (c.async) return null;
      const instance = c.instance as { validate: Validate };
      const rule = {
        validate: instance.validate.bind(instance),
        args: { targetName: dto.name, property: m.propertyName, object: {}, value: undefined, constraints: m.constraints },
      };
      // class-validator checks IsDefined before the other rules; the order does not change a yes, only speed.
      if (m.type === ValidationTypes.IS_DEFINED) plan.rules.unshift(rule);
      else plan.rules.push(rule);
    }
  }
  const compiled = [...plans.values()];
  return (instance: object) => {
    for (const plan of compiled) {
      const value = (instance as Record<string, unknown>)[plan.property];
      let applies = true;
      for (const condition of plan.conditions) if (!condition(instance, value)) applies = false;
      if (!applies) continue;
      for (const rule of plan.rules) {
        rule.args.object = instance;
        rule.args.value = value;
        const yes = rule.validate(value, rule.args) === true;
        // Not kept past the call: the last body checked (up to the body limit) would stay reachable.
        rule.args.object = NOTHING;
        rule.args.value = undefined;
        // A promise (a constraint that turned out async) is not a yes: class-validator decides.
        if (!yes) return false;
      }
    }
    return true;
  };
}
