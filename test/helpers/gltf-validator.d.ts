/** The parts of the Khronos glTF validator's npm package (compiled from Dart, untyped) the tests use. */
declare module 'gltf-validator' {
  namespace validator {
    interface ValidationMessage {
      readonly code: string;
      readonly message: string;
      readonly severity: number;
      readonly pointer?: string;
    }
    interface ValidationReport {
      readonly issues: {
        readonly numErrors: number;
        readonly numWarnings: number;
        readonly numInfos: number;
        readonly numHints: number;
        readonly messages: readonly ValidationMessage[];
      };
      readonly info?: { readonly totalTriangleCount?: number; readonly totalVertexCount?: number; readonly hasTextures?: boolean };
    }
  }
  const validator: {
    validateBytes(data: Uint8Array, options?: { readonly maxIssues?: number }): Promise<validator.ValidationReport>;
  };
  export = validator;
}
