package plugin

import (
	"fmt"
	"net/rpc"
	"reflect"
	"unsafe"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/toolloop/toolloop/plugin/internal/wire"
)

// dispense opens the plugin's tool service and returns the host's RPC
// client of it, whose replies are read through a clientCodec that skips
// any message over limit bytes.
//
// go-plugin's own Dispense does what this does, but reads the stream with
// net/rpc's gob codec, which reads whatever size a message claims into
// memory: a plugin that ignores the output budget (built against an older
// version of this package, or hostile) could make the host allocate
// gigabytes. go-plugin does not export the two things needed to dispense
// otherwise, the RPCClient's control connection and its broker, so they
// are read from its fields, which every go-plugin release since 2016 has
// had. Should a later release rename them, dispense falls back to
// go-plugin's Dispense, and capped is false.
func dispense(rc goplugin.ClientProtocol, limit int64) (d *dispensed, capped bool, err error) {
	control, broker, ok := rpcClientParts(rc)
	if !ok {
		raw, err := rc.Dispense(wire.PluginName)
		if err != nil {
			return nil, false, err
		}
		return raw.(*dispensed), false, nil
	}
	// What go-plugin's RPCClient.Dispense does, but for the codec.
	var id uint32
	if err := control.Call("Dispenser.Dispense", wire.PluginName, &id); err != nil {
		return nil, false, err
	}
	conn, err := broker.Dial(id)
	if err != nil {
		return nil, false, fmt.Errorf("opening the tool service stream: %w", err)
	}
	return &dispensed{broker: broker, rpc: rpc.NewClientWithCodec(newClientCodec(conn, limit))}, true, nil
}

// rpcClientParts returns the control connection and the broker of a
// go-plugin net/rpc client, if it has the fields they are kept in.
func rpcClientParts(rc goplugin.ClientProtocol) (control *rpc.Client, broker *goplugin.MuxBroker, ok bool) {
	c, isRPC := rc.(*goplugin.RPCClient)
	if !isRPC || c == nil {
		return nil, nil, false
	}
	v := reflect.ValueOf(c).Elem()
	control, ok1 := fieldOf[*rpc.Client](v, "control")
	broker, ok2 := fieldOf[*goplugin.MuxBroker](v, "broker")
	return control, broker, ok1 && ok2 && control != nil && broker != nil
}

// fieldOf reads the field name of the struct v, exported or not, if it
// has type T. v must be addressable.
func fieldOf[T any](v reflect.Value, name string) (T, bool) {
	var zero T
	f := v.FieldByName(name)
	if !f.IsValid() || f.Type() != reflect.TypeFor[T]() {
		return zero, false
	}
	return *(*T)(unsafe.Pointer(f.UnsafeAddr())), true
}
