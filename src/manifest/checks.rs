//! The table of manifest checks: every diagnostic code, in order, with its summary.
//!
//! This is the one list of codes. `docs/manifest-reference.md` documents each of them and a test
//! checks the two agree; every code also fires on at least one broken manifest in the tests.

use std::fmt;

/// A stable diagnostic code (`FL001` …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Code(pub u16);

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FL{:03}", self.0)
    }
}

/// How bad a finding is: errors fail `manifest-lint` and stop the server from starting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One row of the table.
pub struct Check {
    pub code: Code,
    pub severity: Severity,
    pub summary: &'static str,
}

macro_rules! checks {
    ($($name:ident = $num:literal, $sev:ident, $summary:literal;)*) => {
        $(pub const $name: Code = Code($num);)*
        /// Every check, in code order.
        pub const ALL: &[Check] = &[
            $(Check { code: $name, severity: Severity::$sev, summary: $summary },)*
        ];
    };
}

checks! {
    YAML_SYNTAX = 1, Error, "the file is not valid YAML";
    UNKNOWN_KEY = 2, Error, "a key the manifest does not define";
    WRONG_TYPE = 3, Error, "a value of the wrong type, or a required key missing";
    TEMPLATE_SYNTAX = 10, Error, "a URI template outside the supported RFC 6570 subset";
    TEMPLATE_SCHEME = 11, Error, "a URI template whose scheme is not `forgejo`";
    DUPLICATE_TEMPLATE = 12, Error, "two resources with the same URI template or name";
    ROUTE_CONFLICT = 13, Error, "two templates that route to the same path";
    SCOPELESS_ID = 14, Error, "a numeric id with no owning scope before it";
    UNKNOWN_TEMPLATE = 15, Error, "a listing or completion that names no template of the manifest";
    UNKNOWN_RULE = 20, Error, "a parameter names a rule that does not exist";
    UNRULED_VARIABLE = 21, Error, "a template variable or tool argument without a validation rule";
    UNUSED_VARIABLE = 22, Error, "a template variable no request or projection uses";
    UNBOUND_PLACEHOLDER = 23, Error, "a request placeholder that no variable or argument binds";
    BAD_RULE = 24, Error, "a rule that cannot be compiled";
    DUPLICATE_RULE = 25, Error, "a rule defined twice";
    REQUEST_SYNTAX = 30, Error, "a request line that is not `METHOD /path?query`";
    SWAGGER_ENDPOINT = 31, Error, "an upstream endpoint the swagger does not have";
    SWAGGER_PARAMETER = 32, Error, "an upstream parameter the swagger does not have";
    JSONPATH_SYNTAX = 40, Error, "a JSONPath expression that does not compile";
    MARKDOWN_SYNTAX = 41, Error, "a markdown template that does not compile";
    MARKDOWN_FIELD = 42, Error, "a markdown template using a field the projection does not produce";
    EXPRESSION = 43, Error, "a projection expression with an unknown source or function";
    FIELD_TYPE = 44, Error, "a projected tool field without a declared type, a type that does not fit its expression, or a field type no tool uses";
    PICKED_FIELD = 45, Error, "a resource or an embed picks a field its tool does not project";
    UNKNOWN_TOOL = 50, Error, "a sentinel names a tool that does not exist";
    DUPLICATE_TOOL = 51, Error, "two tools with the same name";
    TOOL_NAME = 52, Error, "a tool name that is not snake_case or is longer than 64 characters";
    // 53 is retired: a tool is written under its toolset, so none can name an unknown one.
    CORE_TOOL = 54, Error, "the core list names a tool that is not declared, or names one twice";
    RESERVED_TOOL = 55, Error, "a tool takes the name of one of forgelens's meta-tools";
    SYNONYM = 56, Error, "a search synonym without a word or without what it stands for";
    LONG_SUMMARY = 57, Error, "a tool description whose first sentence (what tools/list shows) is over 200 characters";
    BAD_CAP = 60, Error, "a cap or limit that is not positive";
    LIMIT_ABOVE_CAP = 61, Error, "a default limit above its cap";
    MUTABLE_KEY = 62, Error, "an immutable resource not keyed by a full commit sha";
    PROVISIONAL = 63, Error, "a provisional rule on a mutable resource, on a field the projection does not produce, or with a zero ttl_ms";
    READ_ONLY_WRITE = 70, Error, "a PUT, PATCH or DELETE tool marked read-only";
    DELETE_NOT_DESTRUCTIVE = 71, Error, "a DELETE tool not marked destructive";
    ERROR_TABLE = 80, Error, "an error table with an unknown reason, a bad status key or a missing code";
    BAD_ARGUMENT = 90, Error, "a tool argument whose type, default or location is inconsistent";
}

/// The row of `code`.
pub fn check(code: Code) -> &'static Check {
    ALL.iter()
        .find(|c| c.code == code)
        .expect("every code is declared by the checks! table")
}
