"""Field names of a few network tracepoints, as libkperf's kperf.trace_pointer names them:
kperf.PointerEvt.<Event>.event_name is the name to put in evtList, and the other attributes
are the field names to pass to kperf.get_field / get_field_exp."""


class PointerCommData:
    """The fields every tracepoint record starts with."""

    common_type = "common_type"
    common_flags = "common_flags"
    common_preempt_count = "common_preempt_count"
    common_pid = "common_pid"


class NetNetifRx(PointerCommData):
    event_name = "net:netif_rx"
    name = "name"
    skbaddr = "skbaddr"
    len = "len"


class SkebSkbCopyDatagramIovec(PointerCommData):
    event_name = "skb:skb_copy_datagram_iovec"
    skbaddr = "skbaddr"
    len = "len"


class NetApiGroReceiveEntry(PointerCommData):
    event_name = "net:napi_gro_receive_entry"
    name = "name"
    napi_id = "napi_id"
    queue_mapping = "queue_mapping"
    skbaddr = "skbaddr"
    vlan_tagged = "vlan_tagged"
    vlan_proto = "vlan_proto"
    vlan_tci = "vlan_tci"
    protocol = "protocol"
    ip_summed = "ip_summed"
    hash = "hash"
    l4_hash = "l4_hash"
    len = "len"
    data_len = "data_len"
    truesize = "truesize"
    mac_header_valid = "mac_header_valid"
    mac_header = "mac_header"
    nr_frags = "nr_frags"
    gso_size = "gso_size"
    gso_type = "gso_type"


class PointerEvt:
    """The events whose field names this module lists."""

    NetApiGroReceiveEntry = NetApiGroReceiveEntry
    NetNetifRx = NetNetifRx
    SkebSkbCopyDatagramIovec = SkebSkbCopyDatagramIovec


__all__ = ["PointerEvt", "PointerCommData"]
