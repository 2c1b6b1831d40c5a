"""The trainer side: it names the workers' methods in remote calls."""


def sync_round(llm, named):  # context: eager
    llm.collective_rpc("refresh_weights", args=(named,))


def resume(llm):  # context: eager
    llm.collective_rpc("restore_weights")


def pull(llm):  # context: eager
    llm.collective_rpc(method="reset_scales", args=())
