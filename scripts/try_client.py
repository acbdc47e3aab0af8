"""Drive forgelens with the official MCP Python SDK, as a new user's client would.

Usage: python3 scripts/try_client.py [PATH_TO_FORGELENS] [URI]
The server inherits FORGEJO_URL / FORGEJO_TOKEN from the environment.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/forgelens"
    uri = sys.argv[2] if len(sys.argv) > 2 else "forgejo://instance"
    params = StdioServerParameters(command=binary, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            print("server:", init.server_info.name, init.server_info.version, "protocol", init.protocol_version)
            templates = await session.list_resource_templates()
            print("templates:", len(templates.resource_templates))
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            more = " (next page: yes)" if tools.next_cursor else ""
            print(f"tools: {len(names)} on the first page{more}, starting", ", ".join(names[:3]))
            result = await session.read_resource(uri)
            for block in result.contents:
                print(block.mime_type, block.text)


asyncio.run(main())
