import { Extensions } from '@nestjs/graphql';

/** Marker put in a field's GraphQL extensions; the `spec` profile removes every field that has it. */
export const PRODUCT_EXTENSION = 'loyaltyProductExtension';

/** Marker of a field served only under the `galxe` profile; the other profiles remove it. */
export const GALXE_EXTENSION = 'loyaltyGalxeField';

/**
 * Marks a field as an extension beyond the base contract (docs/api.md, Extensions and strict mode),
 * so that the `spec` profile can hide it and leave exactly the base schema.
 */
export const ExtensionField = (): MethodDecorator & PropertyDecorator =>
  Extensions({ [PRODUCT_EXTENSION]: true });

/**
 * Marks a field that exists for clients written against Galxe's API (docs/galxe-compatibility.md):
 * served under the `galxe` profile only.
 */
export const GalxeField = (): MethodDecorator & PropertyDecorator =>
  Extensions({ [GALXE_EXTENSION]: true });
