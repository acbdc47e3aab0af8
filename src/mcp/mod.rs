//! The MCP adapter: the only module that knows rmcp.
//!
//! [`Server`] implements rmcp's `ServerHandler` by hand over a [`Service`]: templates, concrete
//! resources, reads and tools are listed from the compiled catalog, reads and calls go to the
//! service, and [`convert`] maps results and errors to protocol types. The transports
//! (stdio here, HTTP elsewhere) are thin shells around the same handler.

mod convert;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ResourcesCapability, ServerCapabilities, ServerConfig, ToolsCapability,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::engine::{Catalog, Tool};
use crate::service::{CallError, Service};

/// How many entries one page of a list answer holds.
pub const PAGE_SIZE: usize = 100;

/// The MCP server: a handle to the shared service.
#[derive(Debug, Clone)]
pub struct Server {
    service: Arc<Service>,
}

impl Server {
    pub fn new(service: Arc<Service>) -> Server {
        Server { service }
    }
}

/// What `initialize` says to a client's model about using forgelens.
const INSTRUCTIONS: &str = "forgelens serves a Forgejo/Gitea instance. Read a resource \
(forgejo://repo/{owner}/{repo}/...) when you hold an id, index or sha; call a tool to list, \
search or change things. Lists are bounded: when an answer says it was truncated, follow the \
tool and page it names.";

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_tools()
            .build();
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(false);
        resources.list_changed = Some(false);
        capabilities.resources = Some(resources);
        let mut tools = ToolsCapability::default();
        tools.list_changed = Some(false);
        capabilities.tools = Some(tools);
        let mut implementation = Implementation::new("forgelens", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("forgelens".to_owned());
        implementation.description = Some(env!("CARGO_PKG_DESCRIPTION").to_owned());
        ServerConfig::new(capabilities)
            .with_server_info(implementation)
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let all: Vec<_> = self
            .service
            .catalog()
            .resources()
            .iter()
            .filter(|r| !r.is_concrete())
            .map(convert::template)
            .collect();
        let (items, next) = convert::page(all, cursor(&request))?;
        let mut result = ListResourceTemplatesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let all: Vec<_> = self
            .service
            .catalog()
            .resources()
            .iter()
            .filter(|r| r.is_concrete())
            .map(convert::concrete)
            .collect();
        let (items, next) = convert::page(all, cursor(&request))?;
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let token = self.service.token();
        match self.service.read(&request.uri, token).await {
            Ok(output) => Ok(convert::read_result(&request.uri, output, token.is_some()).into()),
            Err(error) => {
                let reason = self.service.catalog().errors.reason(&error);
                tracing::info!(uri = %request.uri, %reason, "read failed: {error}");
                Err(convert::error(
                    &self.service.catalog().errors,
                    &request.uri,
                    &error,
                ))
            }
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        tools_page(self.service.catalog(), cursor(&request))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        match self
            .service
            .call(&request.name, arguments, self.service.token())
            .await
        {
            Ok(value) => Ok(convert::tool_success(value).into()),
            Err(CallError::Unknown(name)) => Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`; tools/list shows the tools offered"),
                None,
            )),
            Err(refused @ CallError::Refused { .. }) => {
                Ok(convert::tool_failure(refused.to_string(), None).into())
            }
            Err(CallError::Failed(error)) => {
                let errors = &self.service.catalog().errors;
                tracing::info!(tool = %request.name, reason = %errors.reason(&error), "call failed: {error}");
                Ok(convert::tool_failure(
                    errors.message(&error),
                    Some((errors.reason(&error), error.upstream_status())),
                )
                .into())
            }
        }
    }
}

/// One page of `tools/list`: the page is cut first, so only its tools are converted.
pub fn tools_page(catalog: &Catalog, cursor: Option<&str>) -> Result<ListToolsResult, ErrorData> {
    let all: Vec<&Tool> = catalog.tools().iter().collect();
    let (page, next) = convert::page(all, cursor)?;
    let mut result = ListToolsResult::with_all_items(page.into_iter().map(convert::tool).collect());
    result.next_cursor = next;
    Ok(result)
}

fn cursor(request: &Option<PaginatedRequestParams>) -> Option<&str> {
    request.as_ref().and_then(|r| r.cursor.as_deref())
}

/// Serves MCP over stdin/stdout until the client goes away.
pub async fn serve_stdio(service: Arc<Service>) -> anyhow::Result<()> {
    let running = Server::new(service).serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
